// parse shim: everything is declared by cuda_shim.h
#pragma once
