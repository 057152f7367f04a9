// CPU CUDA runtime: CUDA's vector types (char1..double4) with CUDA's sizes and alignment,
// their make_* constructors, and dim3.  Written out by a one-off script; maintained by hand.
#pragma once
#include "cuda_cpu/defines.h"

// The front end's parse shim declares these types itself (see cuda_cpu/defines.h).
#ifndef CUDA_CPU_PARSE_SHIM
struct __attribute__((aligned(1))) char1 { signed char x; };
struct __attribute__((aligned(2))) char2 { signed char x, y; };
struct __attribute__((aligned(1))) char3 { signed char x, y, z; };
struct __attribute__((aligned(4))) char4 { signed char x, y, z, w; };
struct __attribute__((aligned(1))) uchar1 { unsigned char x; };
struct __attribute__((aligned(2))) uchar2 { unsigned char x, y; };
struct __attribute__((aligned(1))) uchar3 { unsigned char x, y, z; };
struct __attribute__((aligned(4))) uchar4 { unsigned char x, y, z, w; };
struct __attribute__((aligned(2))) short1 { short x; };
struct __attribute__((aligned(4))) short2 { short x, y; };
struct __attribute__((aligned(2))) short3 { short x, y, z; };
struct __attribute__((aligned(8))) short4 { short x, y, z, w; };
struct __attribute__((aligned(2))) ushort1 { unsigned short x; };
struct __attribute__((aligned(4))) ushort2 { unsigned short x, y; };
struct __attribute__((aligned(2))) ushort3 { unsigned short x, y, z; };
struct __attribute__((aligned(8))) ushort4 { unsigned short x, y, z, w; };
struct __attribute__((aligned(4))) int1 { int x; };
struct __attribute__((aligned(8))) int2 { int x, y; };
struct __attribute__((aligned(4))) int3 { int x, y, z; };
struct __attribute__((aligned(16))) int4 { int x, y, z, w; };
struct __attribute__((aligned(4))) uint1 { unsigned int x; };
struct __attribute__((aligned(8))) uint2 { unsigned int x, y; };
struct __attribute__((aligned(4))) uint3 { unsigned int x, y, z; };
struct __attribute__((aligned(16))) uint4 { unsigned int x, y, z, w; };
struct __attribute__((aligned(8))) long1 { long x; };
struct __attribute__((aligned(16))) long2 { long x, y; };
struct __attribute__((aligned(8))) long3 { long x, y, z; };
struct __attribute__((aligned(16))) long4 { long x, y, z, w; };
struct __attribute__((aligned(8))) ulong1 { unsigned long x; };
struct __attribute__((aligned(16))) ulong2 { unsigned long x, y; };
struct __attribute__((aligned(8))) ulong3 { unsigned long x, y, z; };
struct __attribute__((aligned(16))) ulong4 { unsigned long x, y, z, w; };
struct __attribute__((aligned(8))) longlong1 { long long x; };
struct __attribute__((aligned(16))) longlong2 { long long x, y; };
struct __attribute__((aligned(8))) longlong3 { long long x, y, z; };
struct __attribute__((aligned(16))) longlong4 { long long x, y, z, w; };
struct __attribute__((aligned(8))) ulonglong1 { unsigned long long x; };
struct __attribute__((aligned(16))) ulonglong2 { unsigned long long x, y; };
struct __attribute__((aligned(8))) ulonglong3 { unsigned long long x, y, z; };
struct __attribute__((aligned(16))) ulonglong4 { unsigned long long x, y, z, w; };
struct __attribute__((aligned(4))) float1 { float x; };
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(4))) float3 { float x, y, z; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(8))) double1 { double x; };
struct __attribute__((aligned(16))) double2 { double x, y; };
struct __attribute__((aligned(8))) double3 { double x, y, z; };
struct __attribute__((aligned(16))) double4 { double x, y, z, w; };

inline constexpr char1 make_char1(signed char x) { return char1{x}; }
inline constexpr char2 make_char2(signed char x, signed char y) { return char2{x, y}; }
inline constexpr char3 make_char3(signed char x, signed char y, signed char z) { return char3{x, y, z}; }
inline constexpr char4 make_char4(signed char x, signed char y, signed char z, signed char w) { return char4{x, y, z, w}; }
inline constexpr uchar1 make_uchar1(unsigned char x) { return uchar1{x}; }
inline constexpr uchar2 make_uchar2(unsigned char x, unsigned char y) { return uchar2{x, y}; }
inline constexpr uchar3 make_uchar3(unsigned char x, unsigned char y, unsigned char z) { return uchar3{x, y, z}; }
inline constexpr uchar4 make_uchar4(unsigned char x, unsigned char y, unsigned char z, unsigned char w) { return uchar4{x, y, z, w}; }
inline constexpr short1 make_short1(short x) { return short1{x}; }
inline constexpr short2 make_short2(short x, short y) { return short2{x, y}; }
inline constexpr short3 make_short3(short x, short y, short z) { return short3{x, y, z}; }
inline constexpr short4 make_short4(short x, short y, short z, short w) { return short4{x, y, z, w}; }
inline constexpr ushort1 make_ushort1(unsigned short x) { return ushort1{x}; }
inline constexpr ushort2 make_ushort2(unsigned short x, unsigned short y) { return ushort2{x, y}; }
inline constexpr ushort3 make_ushort3(unsigned short x, unsigned short y, unsigned short z) { return ushort3{x, y, z}; }
inline constexpr ushort4 make_ushort4(unsigned short x, unsigned short y, unsigned short z, unsigned short w) { return ushort4{x, y, z, w}; }
inline constexpr int1 make_int1(int x) { return int1{x}; }
inline constexpr int2 make_int2(int x, int y) { return int2{x, y}; }
inline constexpr int3 make_int3(int x, int y, int z) { return int3{x, y, z}; }
inline constexpr int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline constexpr uint1 make_uint1(unsigned int x) { return uint1{x}; }
inline constexpr uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }
inline constexpr uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
inline constexpr uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w) { return uint4{x, y, z, w}; }
inline constexpr long1 make_long1(long x) { return long1{x}; }
inline constexpr long2 make_long2(long x, long y) { return long2{x, y}; }
inline constexpr long3 make_long3(long x, long y, long z) { return long3{x, y, z}; }
inline constexpr long4 make_long4(long x, long y, long z, long w) { return long4{x, y, z, w}; }
inline constexpr ulong1 make_ulong1(unsigned long x) { return ulong1{x}; }
inline constexpr ulong2 make_ulong2(unsigned long x, unsigned long y) { return ulong2{x, y}; }
inline constexpr ulong3 make_ulong3(unsigned long x, unsigned long y, unsigned long z) { return ulong3{x, y, z}; }
inline constexpr ulong4 make_ulong4(unsigned long x, unsigned long y, unsigned long z, unsigned long w) { return ulong4{x, y, z, w}; }
inline constexpr longlong1 make_longlong1(long long x) { return longlong1{x}; }
inline constexpr longlong2 make_longlong2(long long x, long long y) { return longlong2{x, y}; }
inline constexpr longlong3 make_longlong3(long long x, long long y, long long z) { return longlong3{x, y, z}; }
inline constexpr longlong4 make_longlong4(long long x, long long y, long long z, long long w) { return longlong4{x, y, z, w}; }
inline constexpr ulonglong1 make_ulonglong1(unsigned long long x) { return ulonglong1{x}; }
inline constexpr ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) { return ulonglong2{x, y}; }
inline constexpr ulonglong3 make_ulonglong3(unsigned long long x, unsigned long long y, unsigned long long z) { return ulonglong3{x, y, z}; }
inline constexpr ulonglong4 make_ulonglong4(unsigned long long x, unsigned long long y, unsigned long long z, unsigned long long w) { return ulonglong4{x, y, z, w}; }
inline constexpr float1 make_float1(float x) { return float1{x}; }
inline constexpr float2 make_float2(float x, float y) { return float2{x, y}; }
inline constexpr float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }
inline constexpr float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline constexpr double1 make_double1(double x) { return double1{x}; }
inline constexpr double2 make_double2(double x, double y) { return double2{x, y}; }
inline constexpr double3 make_double3(double x, double y, double z) { return double3{x, y, z}; }
inline constexpr double4 make_double4(double x, double y, double z, double w) { return double4{x, y, z, w}; }

// dim3: launch extents; unspecified components are 1.
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
#endif  // CUDA_CPU_PARSE_SHIM

// dim3 as a launch rewritten in a program's macro body spells it: a parameter of the macro may be
// named dim3, none plausibly cudacpu_dim3.
using cudacpu_dim3 = dim3;
