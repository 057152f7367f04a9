// CPU CUDA runtime: CUDA arrays and texture objects (CUDA 12's texture-object API; the legacy
// texture<> references and surfaces are not provided).
//
// A cudaTextureObject_t is an index into a table of texture records (handle 0 is never a valid
// texture, as in CUDA).  The table grows in fixed chunks that are never moved or freed, so
// fetches from any number of OpenMP threads read it without a lock; creation and destruction
// take a mutex.  A cudaArray is a dense allocation (rows of width texels, height rows per
// slice, depth slices or layers).
//
// Fetches follow CUDA's texture unit: point filtering reads texel floor(coordinate)
// (unnormalized coordinates: texel i covers [i, i+1)); linear filtering samples at
// coordinate - 0.5 and blends the 2, 4 or 8 neighbours with weights quantized, as the
// hardware does, to 9-bit fixed point with 8 fractional bits (the blend itself is computed in
// float); the address mode is applied per dimension to every texel index (wrap and mirror
// only with normalized coordinates, otherwise clamp; border reads borderColor, 0 by default);
// readMode cudaReadModeNormalizedFloat maps 8- and 16-bit integers to [0, 1] (unsigned) or
// [-1, 1] (signed).  tex1Dfetch reads linear memory by integer index, 0 outside it.
// Mipmaps are not provided: the *Lod fetches read level 0.
#pragma once
#include "cuda_runtime_api.h"  // includes this header at its end
#include "cuda_cpu/defines.h"
#include "cuda_cpu/driver_types.h"
#include "cuda_cpu/narrow_float.h"
#include "vector_types.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <vector>

// ---------------------------------------------------------------- types (CUDA's driver_types.h / texture_types.h)
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;

enum cudaChannelFormatKind {
    cudaChannelFormatKindSigned = 0,
    cudaChannelFormatKindUnsigned = 1,
    cudaChannelFormatKindFloat = 2,
    cudaChannelFormatKindNone = 3,
};

struct cudaChannelFormatDesc {
    int x;
    int y;
    int z;
    int w;
    enum cudaChannelFormatKind f;
};

enum cudaArrayFlags_cpu : unsigned int {
    cudaArrayDefault = 0x00,
    cudaArrayLayered = 0x01,
    cudaArraySurfaceLoadStore = 0x02,
    cudaArrayCubemap = 0x04,
    cudaArrayTextureGather = 0x08,
};

typedef const struct cudaArray* cudaArray_const_t;
struct cudaMipmappedArray;
typedef struct cudaMipmappedArray* cudaMipmappedArray_t;

struct cudaArray {
    cudaChannelFormatDesc desc;
    cudaExtent extent;  // in elements, as the array was created (height 0: 1-D, depth 0: 2-D)
    unsigned int flags;
    size_t texel_bytes;
    size_t width, height, depth;  // storage: depth slices (or layers) of height rows of width texels
    unsigned char* data;
};

enum cudaResourceType {
    cudaResourceTypeArray = 0x00,
    cudaResourceTypeMipmappedArray = 0x01,
    cudaResourceTypeLinear = 0x02,
    cudaResourceTypePitch2D = 0x03,
};

struct cudaResourceDesc {
    enum cudaResourceType resType;
    union {
        struct {
            cudaArray_t array;
        } array;
        struct {
            cudaMipmappedArray_t mipmap;
        } mipmap;
        struct {
            void* devPtr;
            struct cudaChannelFormatDesc desc;
            size_t sizeInBytes;
        } linear;
        struct {
            void* devPtr;
            struct cudaChannelFormatDesc desc;
            size_t width;
            size_t height;
            size_t pitchInBytes;
        } pitch2D;
    } res;
    unsigned int flags;
};

enum cudaResourceViewFormat { cudaResViewFormatNone = 0x00 };
struct cudaResourceViewDesc {
    enum cudaResourceViewFormat format;
    size_t width;
    size_t height;
    size_t depth;
    unsigned int firstMipmapLevel;
    unsigned int lastMipmapLevel;
    unsigned int firstLayer;
    unsigned int lastLayer;
};

enum cudaTextureAddressMode {
    cudaAddressModeWrap = 0,
    cudaAddressModeClamp = 1,
    cudaAddressModeMirror = 2,
    cudaAddressModeBorder = 3,
};
enum cudaTextureFilterMode {
    cudaFilterModePoint = 0,
    cudaFilterModeLinear = 1,
};
enum cudaTextureReadMode {
    cudaReadModeElementType = 0,
    cudaReadModeNormalizedFloat = 1,
};

struct cudaTextureDesc {
    enum cudaTextureAddressMode addressMode[3];
    enum cudaTextureFilterMode filterMode;
    enum cudaTextureReadMode readMode;
    int sRGB;
    float borderColor[4];
    int normalizedCoords;
    unsigned int maxAnisotropy;
    enum cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias;
    float minMipmapLevelClamp;
    float maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    int seamlessCubemap;
};

// ---------------------------------------------------------------- channel descriptors
inline cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, cudaChannelFormatKind f) {
    return cudaChannelFormatDesc{x, y, z, w, f};
}
template <class T>
inline cudaChannelFormatDesc cudaCreateChannelDesc() {
    return cudaCreateChannelDesc(0, 0, 0, 0, cudaChannelFormatKindNone);
}
inline cudaChannelFormatDesc cudaCreateChannelDescHalf() { return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf1() { return cudaCreateChannelDesc(16, 0, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf2() { return cudaCreateChannelDesc(16, 16, 0, 0, cudaChannelFormatKindFloat); }
inline cudaChannelFormatDesc cudaCreateChannelDescHalf4() { return cudaCreateChannelDesc(16, 16, 16, 16, cudaChannelFormatKindFloat); }

#define CUDA_CPU_CHANNEL_DESC(T, bits, n, kind)                                                              \
    template <>                                                                                              \
    inline cudaChannelFormatDesc cudaCreateChannelDesc<T>() {                                                \
        return cudaCreateChannelDesc(bits, (n) > 1 ? (bits) : 0, (n) > 2 ? (bits) : 0, (n) > 3 ? (bits) : 0, kind); \
    }
#define CUDA_CPU_CHANNEL_DESCS(S, V, bits, kind)   \
    CUDA_CPU_CHANNEL_DESC(S, bits, 1, kind)        \
    CUDA_CPU_CHANNEL_DESC(V##1, bits, 1, kind)     \
    CUDA_CPU_CHANNEL_DESC(V##2, bits, 2, kind)     \
    CUDA_CPU_CHANNEL_DESC(V##4, bits, 4, kind)
CUDA_CPU_CHANNEL_DESC(char, 8, 1, (static_cast<char>(-1) < 0 ? cudaChannelFormatKindSigned : cudaChannelFormatKindUnsigned))
CUDA_CPU_CHANNEL_DESCS(signed char, char, 8, cudaChannelFormatKindSigned)
CUDA_CPU_CHANNEL_DESCS(unsigned char, uchar, 8, cudaChannelFormatKindUnsigned)
CUDA_CPU_CHANNEL_DESCS(short, short, 16, cudaChannelFormatKindSigned)
CUDA_CPU_CHANNEL_DESCS(unsigned short, ushort, 16, cudaChannelFormatKindUnsigned)
CUDA_CPU_CHANNEL_DESCS(int, int, 32, cudaChannelFormatKindSigned)
CUDA_CPU_CHANNEL_DESCS(unsigned int, uint, 32, cudaChannelFormatKindUnsigned)
CUDA_CPU_CHANNEL_DESCS(float, float, 32, cudaChannelFormatKindFloat)
#undef CUDA_CPU_CHANNEL_DESCS
#undef CUDA_CPU_CHANNEL_DESC

namespace cuda_cpu {

// ---------------------------------------------------------------- formats
struct texel_format {
    int bits[4];
    cudaChannelFormatKind kind;
    size_t bytes;  // per texel; 0: not a format CUDA accepts
};

inline texel_format format_of(const cudaChannelFormatDesc& desc) {
    texel_format format{{desc.x, desc.y, desc.z, desc.w}, desc.f, 0};
    size_t total = 0;
    for (int bits : format.bits) {
        if (bits != 0 && bits != 8 && bits != 16 && bits != 32) return format;
        total += static_cast<size_t>(bits) / 8;
    }
    if (total == 0 || desc.f == cudaChannelFormatKindNone) return format;
    if (desc.f == cudaChannelFormatKindFloat)
        for (int bits : format.bits)
            if (bits == 8) return format;
    format.bytes = total;
    return format;
}

// One texel's channels as doubles (exact for every format), normalized to [0, 1] / [-1, 1]
// where `normalize` (8- and 16-bit integer channels only).
inline void decode_texel(const unsigned char* p, const texel_format& format, bool normalize, double out[4]) {
    for (int c = 0; c < 4; ++c) {
        const int bits = format.bits[c];
        double v = 0;
        if (format.kind == cudaChannelFormatKindFloat) {
            if (bits == 32) {
                float f;
                std::memcpy(&f, p, 4);
                v = f;
            } else if (bits == 16) {
                uint16_t h;
                std::memcpy(&h, p, 2);
                v = half_bits_to_float(h);
            }
        } else if (format.kind == cudaChannelFormatKindUnsigned) {
            if (bits == 8) {
                v = p[0];
                if (normalize) v /= 255.0;
            } else if (bits == 16) {
                uint16_t u;
                std::memcpy(&u, p, 2);
                v = u;
                if (normalize) v /= 65535.0;
            } else if (bits == 32) {
                uint32_t u;
                std::memcpy(&u, p, 4);
                v = u;
            }
        } else if (format.kind == cudaChannelFormatKindSigned) {
            if (bits == 8) {
                v = static_cast<signed char>(p[0]);
                if (normalize) v = std::fmax(v / 127.0, -1.0);
            } else if (bits == 16) {
                int16_t s;
                std::memcpy(&s, p, 2);
                v = s;
                if (normalize) v = std::fmax(v / 32767.0, -1.0);
            } else if (bits == 32) {
                int32_t s;
                std::memcpy(&s, p, 4);
                v = s;
            }
        }
        out[c] = v;
        p += bits / 8;
    }
}

// ---------------------------------------------------------------- texture records
struct texture_record {
    bool live;
    const unsigned char* data;
    size_t size[3];    // texels per dimension (1 where the resource has fewer dimensions)
    size_t pitch;      // bytes per row
    size_t slice;      // bytes per slice (3-D) or layer
    size_t layers;     // layered arrays: the number of layers (else 1)
    bool fetch_only;   // linear memory: tex1Dfetch
    texel_format format;
    bool normalize;    // readMode normalizedFloat on an 8- or 16-bit integer format
    bool linear;       // filterMode linear
    bool normalized_coords;
    cudaTextureAddressMode mode[3];
    double border[4];
    cudaResourceDesc resource;
    cudaTextureDesc texture;
};

class TextureTable {
  public:
    static constexpr unsigned long long chunk_size = 1024, chunk_count = 1024;
    TextureTable() {
        for (auto& chunk : chunks_) chunk.store(nullptr, std::memory_order_relaxed);
    }
    // Lock-free: a handle's record never moves once created.
    const texture_record* find(cudaTextureObject_t handle) const {
        if (handle == 0 || handle >= chunk_size * chunk_count) return nullptr;
        const texture_record* chunk = chunks_[handle / chunk_size].load(std::memory_order_acquire);
        if (chunk == nullptr) return nullptr;
        const texture_record* record = &chunk[handle % chunk_size];
        return record->live ? record : nullptr;
    }
    cudaTextureObject_t create(const texture_record& record) {
        std::lock_guard<std::mutex> lock(mutex_);
        cudaTextureObject_t handle = 0;
        if (!free_.empty()) {
            handle = free_.back();
            free_.pop_back();
        } else {
            if (next_ >= chunk_size * chunk_count) return 0;
            handle = next_++;
        }
        texture_record* chunk = chunks_[handle / chunk_size].load(std::memory_order_relaxed);
        if (chunk == nullptr) {
            chunk = new texture_record[chunk_size]();
            chunks_[handle / chunk_size].store(chunk, std::memory_order_release);
        }
        chunk[handle % chunk_size] = record;
        chunk[handle % chunk_size].live = true;
        return handle;
    }
    bool destroy(cudaTextureObject_t handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (find(handle) == nullptr) return false;
        chunks_[handle / chunk_size].load(std::memory_order_relaxed)[handle % chunk_size].live = false;
        free_.push_back(handle);
        return true;
    }

  private:
    std::atomic<texture_record*> chunks_[chunk_count];
    std::mutex mutex_;
    unsigned long long next_ = 1;
    std::vector<cudaTextureObject_t> free_;
};

// Never destroyed (texture objects may be destroyed by global destructors).
inline TextureTable& texture_table() {
    static TextureTable* table = new TextureTable;
    return *table;
}

// ---------------------------------------------------------------- sampling
// The texel index floor(u) as an integer; huge and NaN coordinates stay far outside any texture.
inline long long texel_floor(float u) {
    const float limit = 1099511627776.0f;  // 2^40
    return static_cast<long long>(std::floor(std::fmin(std::fmax(u, -limit), limit)));
}

// Apply the address mode to index i of a dimension of n texels; false: outside (border).
inline bool address(long long& i, long long n, cudaTextureAddressMode mode, bool normalized_coords) {
    if (!normalized_coords && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror)) mode = cudaAddressModeClamp;
    switch (mode) {
        case cudaAddressModeBorder:
            return i >= 0 && i < n;
        case cudaAddressModeWrap:
            i = ((i % n) + n) % n;
            return true;
        case cudaAddressModeMirror: {
            const long long period = 2 * n, m = ((i % period) + period) % period;
            i = m < n ? m : period - 1 - m;
            return true;
        }
        default:
            i = i < 0 ? 0 : (i >= n ? n - 1 : i);
            return true;
    }
}

inline void read_texel(const texture_record& t, const long long index[3], const bool inside, size_t layer, double out[4]) {
    if (!inside) {
        for (int c = 0; c < 4; ++c) out[c] = t.border[c];
        return;
    }
    const unsigned char* p = t.data + (static_cast<size_t>(index[2]) + layer) * t.slice + static_cast<size_t>(index[1]) * t.pitch +
                             static_cast<size_t>(index[0]) * t.format.bytes;
    decode_texel(p, t.format, t.normalize, out);
}

// Filter the texture at coord[0..dims) (the other dimensions read index 0) of layer `layer`.
inline void sample(const texture_record& t, int dims, const float coord[3], long long layer, double out[4]) {
    const long long last_layer = static_cast<long long>(t.layers) - 1;
    const size_t layer_index = static_cast<size_t>(layer < 0 ? 0 : (layer > last_layer ? last_layer : layer));
    long long base[3] = {0, 0, 0};
    float weight[3] = {0, 0, 0};  // of the upper neighbour
    for (int d = 0; d < dims; ++d) {
        float u = coord[d];
        if (t.normalized_coords) u *= static_cast<float>(t.size[d]);
        if (t.linear) {
            u -= 0.5f;
            const float lower = std::floor(u);
            base[d] = texel_floor(u);
            // 9-bit fixed point with 8 fractional bits, as the texture unit stores the weights.
            weight[d] = std::nearbyint((u - lower) * 256.0f) / 256.0f;
        } else {
            base[d] = texel_floor(u);
        }
    }
    const int corners = t.linear ? 1 << dims : 1;
    float sum[4] = {0, 0, 0, 0};
    for (int corner = 0; corner < corners; ++corner) {
        long long index[3] = {0, 0, 0};
        bool inside = true;
        float w = 1.0f;
        for (int d = 0; d < dims; ++d) {
            const bool upper = (corner >> d) & 1;
            index[d] = base[d] + (upper ? 1 : 0);
            w *= upper ? weight[d] : 1.0f - weight[d];
            inside = address(index[d], static_cast<long long>(t.size[d]), t.mode[d], t.normalized_coords) && inside;
        }
        if (!t.linear) {
            read_texel(t, index, inside, layer_index, out);
            return;
        }
        double texel[4];
        read_texel(t, index, inside, layer_index, texel);
        for (int c = 0; c < 4; ++c) sum[c] += w * static_cast<float>(texel[c]);
    }
    for (int c = 0; c < 4; ++c) out[c] = sum[c];
}

// The return type's components: scalars and CUDA's vector types.
template <class T, class = void>
struct texel_type {
    using element = T;
    static constexpr int count = 1;
};
#define CUDA_CPU_TEXEL_VECTORS(V, E)                                     \
    template <> struct texel_type<V##1> { using element = E; static constexpr int count = 1; }; \
    template <> struct texel_type<V##2> { using element = E; static constexpr int count = 2; }; \
    template <> struct texel_type<V##3> { using element = E; static constexpr int count = 3; }; \
    template <> struct texel_type<V##4> { using element = E; static constexpr int count = 4; };
CUDA_CPU_TEXEL_VECTORS(char, signed char)
CUDA_CPU_TEXEL_VECTORS(uchar, unsigned char)
CUDA_CPU_TEXEL_VECTORS(short, short)
CUDA_CPU_TEXEL_VECTORS(ushort, unsigned short)
CUDA_CPU_TEXEL_VECTORS(int, int)
CUDA_CPU_TEXEL_VECTORS(uint, unsigned int)
CUDA_CPU_TEXEL_VECTORS(float, float)
#undef CUDA_CPU_TEXEL_VECTORS

template <class T>
inline T texel_as(const double value[4]) {
    using E = typename texel_type<T>::element;
    static_assert(std::is_arithmetic<E>::value, "texture fetches return arithmetic scalars or CUDA vector types");
    E components[4];
    for (int c = 0; c < 4; ++c) components[c] = static_cast<E>(value[c]);
    T result{};
    std::memcpy(static_cast<void*>(&result), components, sizeof(E) * texel_type<T>::count);
    return result;
}

template <class T>
inline T texture_fetch(cudaTextureObject_t handle, int dims, float x, float y, float z, long long layer) {
    const texture_record* t = texture_table().find(handle);
    double value[4] = {0, 0, 0, 0};
    if (t != nullptr && !t->fetch_only) {
        const float coord[3] = {x, y, z};
        sample(*t, dims, coord, layer, value);
    }
    return texel_as<T>(value);
}

}  // namespace cuda_cpu

// ---------------------------------------------------------------- device-side fetches
template <class T>
inline T tex1Dfetch(cudaTextureObject_t handle, int x) {
    const cuda_cpu::texture_record* t = cuda_cpu::texture_table().find(handle);
    double value[4] = {0, 0, 0, 0};
    if (t != nullptr && t->fetch_only && x >= 0 && static_cast<size_t>(x) < t->size[0])
        cuda_cpu::decode_texel(t->data + static_cast<size_t>(x) * t->format.bytes, t->format, t->normalize, value);
    return cuda_cpu::texel_as<T>(value);
}
template <class T>
inline T tex1D(cudaTextureObject_t t, float x) { return cuda_cpu::texture_fetch<T>(t, 1, x, 0, 0, 0); }
template <class T>
inline T tex2D(cudaTextureObject_t t, float x, float y) { return cuda_cpu::texture_fetch<T>(t, 2, x, y, 0, 0); }
template <class T>
inline T tex3D(cudaTextureObject_t t, float x, float y, float z) { return cuda_cpu::texture_fetch<T>(t, 3, x, y, z, 0); }
template <class T>
inline T tex1DLayered(cudaTextureObject_t t, float x, int layer) { return cuda_cpu::texture_fetch<T>(t, 1, x, 0, 0, layer); }
template <class T>
inline T tex2DLayered(cudaTextureObject_t t, float x, float y, int layer) { return cuda_cpu::texture_fetch<T>(t, 2, x, y, 0, layer); }
// No mipmaps: the level-of-detail fetches read level 0.
template <class T>
inline T tex1DLod(cudaTextureObject_t t, float x, float) { return tex1D<T>(t, x); }
template <class T>
inline T tex2DLod(cudaTextureObject_t t, float x, float y, float) { return tex2D<T>(t, x, y); }
template <class T>
inline T tex3DLod(cudaTextureObject_t t, float x, float y, float z, float) { return tex3D<T>(t, x, y, z); }
// CUDA's forms that store through a pointer.
template <class T>
inline void tex1Dfetch(T* result, cudaTextureObject_t t, int x) { *result = tex1Dfetch<T>(t, x); }
template <class T>
inline void tex1D(T* result, cudaTextureObject_t t, float x) { *result = tex1D<T>(t, x); }
template <class T>
inline void tex2D(T* result, cudaTextureObject_t t, float x, float y) { *result = tex2D<T>(t, x, y); }
template <class T>
inline void tex3D(T* result, cudaTextureObject_t t, float x, float y, float z) { *result = tex3D<T>(t, x, y, z); }
template <class T>
inline void tex2DLayered(T* result, cudaTextureObject_t t, float x, float y, int layer) { *result = tex2DLayered<T>(t, x, y, layer); }

// ---------------------------------------------------------------- CUDA arrays
inline cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, cudaExtent extent, unsigned int flags = 0) {
    if (array == nullptr || desc == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *array = nullptr;
    const cuda_cpu::texel_format format = cuda_cpu::format_of(*desc);
    if (format.bytes == 0 || extent.width == 0 || (extent.height == 0 && extent.depth != 0 && !(flags & cudaArrayLayered)))
        return cuda_cpu::report(cudaErrorInvalidValue);
    if (flags & cudaArrayCubemap) return cuda_cpu::report(cudaErrorNotSupported);
    const size_t width = extent.width, height = extent.height ? extent.height : 1, depth = extent.depth ? extent.depth : 1;
    const size_t bytes = width * height * depth * format.bytes;
    void* memory = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (memory == nullptr) return cuda_cpu::report(cudaErrorMemoryAllocation);
    std::memset(memory, 0, bytes);
    *array = new cudaArray{*desc, extent, flags, format.bytes, width, height, depth, static_cast<unsigned char*>(memory)};
    return cudaSuccess;
}
inline cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc, size_t width, size_t height = 0,
                                   unsigned int flags = 0) {
    return cudaMalloc3DArray(array, desc, cudaExtent{width, height, 0}, flags & ~static_cast<unsigned int>(cudaArrayLayered));
}
inline cudaError_t cudaFreeArray(cudaArray_t array) {
    if (array == nullptr) return cudaSuccess;
    std::free(array->data);
    delete array;
    return cudaSuccess;
}
inline cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* desc, cudaExtent* extent, unsigned int* flags, cudaArray_t array) {
    if (array == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    if (desc) *desc = array->desc;
    if (extent) *extent = array->extent;
    if (flags) *flags = array->flags;
    return cudaSuccess;
}
inline cudaError_t cudaGetChannelDesc(cudaChannelFormatDesc* desc, cudaArray_const_t array) {
    if (desc == nullptr || array == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *desc = array->desc;
    return cudaSuccess;
}

namespace cuda_cpu {
// A 2-D byte window of an array's rows (all slices and layers count as rows).
inline cudaError_t array_rows(cudaArray_const_t array, size_t x_bytes, size_t row, size_t width_bytes, size_t rows,
                              unsigned char** start) {
    if (array == nullptr) return report(cudaErrorInvalidValue);
    const size_t pitch = array->width * array->texel_bytes;
    if (x_bytes + width_bytes > pitch || row + rows > array->height * array->depth) return report(cudaErrorInvalidValue);
    *start = array->data + row * pitch + x_bytes;
    return cudaSuccess;
}
}  // namespace cuda_cpu

inline cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                       size_t width, size_t height, cudaMemcpyKind kind) {
    unsigned char* start = nullptr;
    const cudaError_t error = cuda_cpu::array_rows(dst, wOffset, hOffset, width, height, &start);
    if (error != cudaSuccess) return error;
    return cuda_cpu::copy_2d(start, dst->width * dst->texel_bytes, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t spitch,
                                            size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t = 0) {
    return cudaMemcpy2DToArray(dst, wOffset, hOffset, src, spitch, width, height, kind);
}
inline cudaError_t cudaMemcpy2DFromArray(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                         size_t width, size_t height, cudaMemcpyKind kind) {
    unsigned char* start = nullptr;
    const cudaError_t error = cuda_cpu::array_rows(src, wOffset, hOffset, width, height, &start);
    if (error != cudaSuccess) return error;
    return cuda_cpu::copy_2d(dst, dpitch, start, src->width * src->texel_bytes, width, height, kind);
}
inline cudaError_t cudaMemcpy2DFromArrayAsync(void* dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                              size_t width, size_t height, cudaMemcpyKind kind, cudaStream_t = 0) {
    return cudaMemcpy2DFromArray(dst, dpitch, src, wOffset, hOffset, width, height, kind);
}
// The deprecated linear copies: `count` bytes from byte wOffset of row hOffset on.
inline cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                                     cudaMemcpyKind kind) {
    if (dst == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    const size_t pitch = dst->width * dst->texel_bytes, offset = hOffset * pitch + wOffset;
    if (wOffset > pitch || offset + count > pitch * dst->height * dst->depth) return cuda_cpu::report(cudaErrorInvalidValue);
    return cuda_cpu::copy(dst->data + offset, src, count, kind);
}
inline cudaError_t cudaMemcpyFromArray(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                       cudaMemcpyKind kind) {
    if (src == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    const size_t pitch = src->width * src->texel_bytes, offset = hOffset * pitch + wOffset;
    if (wOffset > pitch || offset + count > pitch * src->height * src->depth) return cuda_cpu::report(cudaErrorInvalidValue);
    return cuda_cpu::copy(dst, src->data + offset, count, kind);
}
inline cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wOffset, size_t hOffset, const void* src, size_t count,
                                          cudaMemcpyKind kind, cudaStream_t = 0) {
    return cudaMemcpyToArray(dst, wOffset, hOffset, src, count, kind);
}
inline cudaError_t cudaMemcpyFromArrayAsync(void* dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                            cudaMemcpyKind kind, cudaStream_t = 0) {
    return cudaMemcpyFromArray(dst, src, wOffset, hOffset, count, kind);
}

namespace cuda_cpu {
// cudaMemcpy3D where a CUDA array takes part: the extent and the array's position are in its
// elements, a pitched pointer's position in bytes.
inline cudaError_t copy_3d_array(const cudaMemcpy3DParms* p) {
    if (!valid_kind(p->kind)) return report(cudaErrorInvalidMemcpyDirection);
    const size_t element = p->srcArray ? p->srcArray->texel_bytes : p->dstArray->texel_bytes;
    if (p->srcArray && p->dstArray && p->srcArray->texel_bytes != p->dstArray->texel_bytes) return report(cudaErrorInvalidValue);
    const cudaExtent e = p->extent;
    const size_t width = e.width * element;
    struct side {
        unsigned char* base;
        size_t pitch, rows, x, y, z;
    };
    auto describe = [&](cudaArray_t array, const cudaPitchedPtr& ptr, const cudaPos& pos, side* s) {
        if (array) {
            *s = side{array->data, array->width * array->texel_bytes, array->height, pos.x * element, pos.y, pos.z};
            return pos.x * element + width <= s->pitch && pos.y + e.height <= array->height && pos.z + e.depth <= array->depth;
        }
        *s = side{static_cast<unsigned char*>(ptr.ptr), ptr.pitch, ptr.ysize ? ptr.ysize : e.height, pos.x, pos.y, pos.z};
        return ptr.ptr != nullptr && pos.x + width <= ptr.pitch;
    };
    side src, dst;
    if (!describe(p->srcArray, p->srcPtr, p->srcPos, &src) || !describe(p->dstArray, p->dstPtr, p->dstPos, &dst))
        return report(cudaErrorInvalidValue);
    for (size_t z = 0; z < e.depth; ++z)
        for (size_t y = 0; y < e.height; ++y)
            std::memmove(dst.base + ((dst.z + z) * dst.rows + dst.y + y) * dst.pitch + dst.x,
                         src.base + ((src.z + z) * src.rows + src.y + y) * src.pitch + src.x, width);
    return cudaSuccess;
}
}  // namespace cuda_cpu

// ---------------------------------------------------------------- texture objects
inline cudaError_t cudaCreateTextureObject(cudaTextureObject_t* object, const cudaResourceDesc* resource,
                                           const cudaTextureDesc* texture, const cudaResourceViewDesc* = nullptr) {
    if (object == nullptr || resource == nullptr || texture == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *object = 0;
    cuda_cpu::texture_record t{};
    t.resource = *resource;
    t.texture = *texture;
    t.size[0] = t.size[1] = t.size[2] = 1;
    t.layers = 1;
    cudaChannelFormatDesc desc{};
    switch (resource->resType) {
        case cudaResourceTypeLinear:
            desc = resource->res.linear.desc;
            t.format = cuda_cpu::format_of(desc);
            if (resource->res.linear.devPtr == nullptr || t.format.bytes == 0) return cuda_cpu::report(cudaErrorInvalidValue);
            t.data = static_cast<const unsigned char*>(resource->res.linear.devPtr);
            t.size[0] = resource->res.linear.sizeInBytes / t.format.bytes;
            t.pitch = t.slice = resource->res.linear.sizeInBytes;
            t.fetch_only = true;
            break;
        case cudaResourceTypePitch2D:
            desc = resource->res.pitch2D.desc;
            t.format = cuda_cpu::format_of(desc);
            if (resource->res.pitch2D.devPtr == nullptr || t.format.bytes == 0 || resource->res.pitch2D.width == 0 ||
                resource->res.pitch2D.height == 0 || resource->res.pitch2D.pitchInBytes < resource->res.pitch2D.width * t.format.bytes)
                return cuda_cpu::report(cudaErrorInvalidValue);
            t.data = static_cast<const unsigned char*>(resource->res.pitch2D.devPtr);
            t.size[0] = resource->res.pitch2D.width;
            t.size[1] = resource->res.pitch2D.height;
            t.pitch = resource->res.pitch2D.pitchInBytes;
            t.slice = t.pitch * t.size[1];
            break;
        case cudaResourceTypeArray: {
            const cudaArray* array = resource->res.array.array;
            if (array == nullptr) return cuda_cpu::report(cudaErrorInvalidResourceHandle);
            desc = array->desc;
            t.format = cuda_cpu::format_of(desc);
            t.data = array->data;
            t.size[0] = array->width;
            t.pitch = array->width * array->texel_bytes;
            t.slice = t.pitch * array->height;
            if (array->flags & cudaArrayLayered) {
                if (array->extent.height == 0) {  // 1-D layered: depth layers of one row
                    t.slice = t.pitch;
                    t.layers = array->height * array->depth;
                } else {
                    t.size[1] = array->height;
                    t.layers = array->depth;
                }
            } else {
                t.size[1] = array->height;
                t.size[2] = array->depth;
            }
            break;
        }
        default:
            return cuda_cpu::report(cudaErrorNotSupported);  // mipmapped arrays
    }
    const bool small_integers = desc.f != cudaChannelFormatKindFloat && t.format.bits[0] <= 16;
    t.normalize = texture->readMode == cudaReadModeNormalizedFloat && small_integers;
    t.linear = texture->filterMode == cudaFilterModeLinear && !t.fetch_only;
    t.normalized_coords = texture->normalizedCoords != 0;
    for (int d = 0; d < 3; ++d) t.mode[d] = texture->addressMode[d];
    for (int c = 0; c < 4; ++c) t.border[c] = texture->borderColor[c];
    *object = cuda_cpu::texture_table().create(t);
    return *object != 0 ? cudaSuccess : cuda_cpu::report(cudaErrorMemoryAllocation);
}
inline cudaError_t cudaDestroyTextureObject(cudaTextureObject_t object) {
    if (object == 0) return cudaSuccess;
    return cuda_cpu::texture_table().destroy(object) ? cudaSuccess : cuda_cpu::report(cudaErrorInvalidValue);
}
inline cudaError_t cudaGetTextureObjectResourceDesc(cudaResourceDesc* resource, cudaTextureObject_t object) {
    const cuda_cpu::texture_record* t = cuda_cpu::texture_table().find(object);
    if (resource == nullptr || t == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *resource = t->resource;
    return cudaSuccess;
}
inline cudaError_t cudaGetTextureObjectTextureDesc(cudaTextureDesc* texture, cudaTextureObject_t object) {
    const cuda_cpu::texture_record* t = cuda_cpu::texture_table().find(object);
    if (texture == nullptr || t == nullptr) return cuda_cpu::report(cudaErrorInvalidValue);
    *texture = t->texture;
    return cudaSuccess;
}
