// parse shim: cg::inclusive_scan and exclusive_scan are declared in cooperative_groups.h
#pragma once
#include <cooperative_groups.h>
