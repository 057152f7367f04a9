// parse shim: cg::reduce and its operators are declared in cooperative_groups.h
#pragma once
#include <cooperative_groups.h>
