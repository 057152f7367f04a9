// Kernel launches of a CPU port go through cudacpu_launch::cudacpu_kernel_launch(), which
//  - records a launch's configuration and arguments when CUDACPU_CAPTURE_DIR is set (the
//    first launch of each kernel specialization): pointer arguments are dumped whole (from the
//    pointer to the end of their cudaMalloc allocation) before and after the launch, scalars by
//    value; and, per specialization, the launches and the seconds spent in them;
//  - runs a tuned CPU version of the kernel when one is registered for this configuration
//    (and, where the version was only verified for them, these scalar values) and the pointer
//    arguments lie in distinct allocations, as in the capture it was verified on; else the
//    faithful lowering.
#pragma once
#include <cuda_runtime.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace cudacpu_launch {

// A tuned version: returns false when it does not apply to this launch.
using Tuned = bool (*)(dim3 grid, dim3 block, std::size_t shared, void** args);

inline std::map<std::string, Tuned>& tuned() {
    static std::map<std::string, Tuned> table;
    return table;
}

// The key of a tuned version: the kernel and, for a template, its specialization; a version
// tuned for k<float> must never run a launch of k<double>.
inline std::string tuned_key(const char* kernel, const char* template_args) {
    return *template_args ? std::string(kernel) + "<" + template_args + ">" : std::string(kernel);
}

// Whether every pointer lies in a cudaMalloc allocation of its own: a tuned version was verified
// with each pointer argument a separate buffer, so a launch whose arguments overlap (or that
// passes memory the runtime did not allocate) keeps the faithful lowering.
inline bool distinct_allocations(std::initializer_list<const void*> pointers) {
    std::vector<void*> starts;
    for (const void* p : pointers) {
        void* start = nullptr;
        cuda_cpu::Allocation allocation{};
        if (!p || !cuda_cpu::allocations().find(p, &start, &allocation)) return false;
        for (void* seen : starts)
            if (seen == start) return false;
        starts.push_back(start);
    }
    return true;
}

struct Register {
    Register(const char* kernel, const char* template_args, Tuned fn) { tuned()[tuned_key(kernel, template_args)] = fn; }
};

}  // namespace cudacpu_launch

struct __half;  // declared here, defined by cuda_fp16.h and cuda_bf16.h where a program includes them
struct __nv_bfloat16;

namespace cudacpu_launch {

template <class T>
constexpr const char* dtype_name() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) return "float32";
    else if constexpr (std::is_same_v<U, ::__half>) return "float16";
    else if constexpr (std::is_same_v<U, ::__nv_bfloat16>) return "bfloat16";
    else if constexpr (std::is_same_v<U, double>) return "float64";
    else if constexpr (std::is_same_v<U, bool>) return "bool";
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 1) return "int8";
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 2) return "int16";
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 4) return "int32";
    else if constexpr (std::is_integral_v<U> && std::is_signed_v<U> && sizeof(U) == 8) return "int64";
    else if constexpr (std::is_integral_v<U> && sizeof(U) == 1) return "uint8";
    else if constexpr (std::is_integral_v<U> && sizeof(U) == 2) return "uint16";
    else if constexpr (std::is_integral_v<U> && sizeof(U) == 4) return "uint32";
    else if constexpr (std::is_integral_v<U> && sizeof(U) == 8) return "uint64";
    else return "";  // a struct: see captured_element_t for what a buffer of them is captured as
}

// CUDA's vector types (float4, int2, ...) hold their elements with no padding: a buffer of them is
// captured as a buffer of its elements (the task's launch casts it back).
template <class T>
struct captured_element { using type = T; };
#define CUDACPU_VECTOR_ELEMENTS(vector, element)                                      \
    template <> struct captured_element<vector##1> { using type = element; };        \
    template <> struct captured_element<vector##2> { using type = element; };        \
    template <> struct captured_element<vector##3> { using type = element; };        \
    template <> struct captured_element<vector##4> { using type = element; };
CUDACPU_VECTOR_ELEMENTS(char, signed char)
CUDACPU_VECTOR_ELEMENTS(uchar, unsigned char)
CUDACPU_VECTOR_ELEMENTS(short, short)
CUDACPU_VECTOR_ELEMENTS(ushort, unsigned short)
CUDACPU_VECTOR_ELEMENTS(int, int)
CUDACPU_VECTOR_ELEMENTS(uint, unsigned int)
CUDACPU_VECTOR_ELEMENTS(long, long)
CUDACPU_VECTOR_ELEMENTS(ulong, unsigned long)
CUDACPU_VECTOR_ELEMENTS(longlong, long long)
CUDACPU_VECTOR_ELEMENTS(ulonglong, unsigned long long)
CUDACPU_VECTOR_ELEMENTS(float, float)
CUDACPU_VECTOR_ELEMENTS(double, double)
#undef CUDACPU_VECTOR_ELEMENTS
// A buffer of any other struct is captured as its bytes, compared exactly (the task's launch casts
// it back); one whose copy would not be its bytes is not captured.
template <class U, bool = std::is_class_v<U> && !std::is_same_v<U, ::__half> && !std::is_same_v<U, ::__nv_bfloat16>>
struct bytes_of_struct { using type = U; };
template <class U>
struct bytes_of_struct<U, true> { using type = std::conditional_t<std::is_trivially_copyable_v<U>, unsigned char, U>; };
template <class T>
using captured_element_t = typename bytes_of_struct<typename captured_element<std::remove_cv_t<T>>::type>::type;

inline bool exists(const std::string& path) {
    FILE* file = std::fopen(path.c_str(), "rb");
    if (file) std::fclose(file);
    return file != nullptr;
}

inline std::string file_text(const std::string& path) {
    std::string text;
    if (FILE* file = std::fopen(path.c_str(), "rb")) {
        char chunk[4096];
        for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
        std::fclose(file);
    }
    return text;
}

inline const char* capture_dir() {
    static const char* dir = std::getenv("CUDACPU_CAPTURE_DIR");
    return dir;
}

// Launches and seconds per kernel specialization over this process, appended to
// CUDACPU_CAPTURE_DIR/launch_times.tsv at exit (a check may run several processes): the port
// tunes the specializations that take the time, and leaves those that take none.
class LaunchTimes {
  public:
    static LaunchTimes& get() {
        static LaunchTimes times;
        return times;
    }
    void add(const char* kernel, const char* template_args, double seconds) {
        std::lock_guard<std::mutex> hold(lock_);
        Total& total = totals_[{kernel, template_args}];
        total.launches++;
        total.seconds += seconds;
    }
    ~LaunchTimes() {
        FILE* file = std::fopen((std::string(capture_dir()) + "/launch_times.tsv").c_str(), "a");
        if (!file) return;
        for (const auto& [key, total] : totals_)
            std::fprintf(file, "%s\t%s\t%ld\t%.9g\n", key.first.c_str(), key.second.c_str(), total.launches,
                         total.seconds);
        std::fclose(file);
    }

  private:
    struct Total {
        long launches = 0;
        double seconds = 0;
    };
    std::mutex lock_;
    std::map<std::pair<std::string, std::string>, Total> totals_;
};

class Capture {
  public:
    // Files are named KERNEL.N, N counting the kernel's captured specializations.
    Capture(const char* kernel, const char* template_args, dim3 grid, dim3 block, std::size_t shared) {
        const char* dir = capture_dir();
        if (!dir) return;
        static std::map<std::string, int> seen;  // specialization -> launches so far
        if (seen[tuned_key(kernel, template_args)]++ > 0) return;
        // The check's earlier processes (several commands) capture into the same folder: a
        // specialization one of them captured is kept (the first run's), a new one takes the next
        // free number (an unfinished .part of a killed run keeps its number).
        const std::string spelled = std::string("\"template_args\": \"") + template_args + "\"";
        int index = 0;
        for (;; ++index) {
            prefix_ = std::string(dir) + "/" + kernel + "." + std::to_string(index);
            if (file_text(prefix_ + ".json").find(spelled) != std::string::npos) {
                prefix_.clear();
                return;
            }
            if (!exists(prefix_ + ".json") && !exists(prefix_ + ".json.part")) break;
        }
        meta_ = std::fopen((prefix_ + ".json.part").c_str(), "w");
        if (!meta_) return;
        std::fprintf(meta_, "{\"kernel\": \"%s\", \"index\": %d, \"template_args\": \"%s\", ", kernel, index, template_args);
        std::fprintf(meta_, "\"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"shared_bytes\": %zu, \"args\": [",
                     grid.x, grid.y, grid.z, block.x, block.y, block.z, shared);
    }
    bool active() const { return meta_ != nullptr; }

    template <class T>
    void argument(int i, const T& value, const char* when) {
        if constexpr (std::is_pointer_v<T>) {
            void* start = nullptr;
            cuda_cpu::Allocation allocation{};
            const void* p = const_cast<const void*>(static_cast<const volatile void*>(value));
            if (!p || !cuda_cpu::allocations().find(p, &start, &allocation)) {
                if (when[0] == 'b') open_arg(i, "{\"kind\": \"pointer\", \"known\": false}");
                return;
            }
            std::size_t offset = static_cast<const char*>(p) - static_cast<const char*>(start);
            std::size_t bytes = allocation.size - offset;
            // The capture runs during the project's own check: it must never make that run fail
            // (a file past the sandbox's size limit kills the writer), so it keeps to a budget.
            if (when[0] == 'b' && !budget_allows(bytes)) {
                too_large_.push_back(i);
                char text[160];
                std::snprintf(text, sizeof text, "{\"kind\": \"pointer\", \"known\": false, \"too_large\": true, "
                              "\"bytes\": %zu}", bytes);
                open_arg(i, text);
                return;
            }
            for (int skipped : too_large_)
                if (skipped == i) return;
            // the contents before the launch are the task's input; after it, only whether they changed
            // (which makes the buffer an output) is needed, so a hash stands for them
            if (when[0] == 'a') {
                if (digest(p, bytes) != before_digest_[i]) changed_.push_back(i);
                return;
            }
            before_digest_[i] = digest(p, bytes);
            std::string file = prefix_ + ".arg" + std::to_string(i) + ".bin";
            if (FILE* blob = std::fopen(file.c_str(), "wb")) {
                std::fwrite(p, 1, bytes, blob);
                std::fclose(blob);
            }
            char text[256];
            std::snprintf(text, sizeof text,
                          "{\"kind\": \"pointer\", \"known\": true, \"dtype\": \"%s\", \"bytes\": %zu, "
                          "\"allocation\": \"%p\", \"offset\": %zu}",
                          dtype_name<captured_element_t<std::remove_pointer_t<T>>>(), bytes, start, offset);
            open_arg(i, text);
        } else if (when[0] == 'b') {
            char text[256];
            if constexpr (std::is_floating_point_v<T>)
                std::snprintf(text, sizeof text, "{\"kind\": \"scalar\", \"dtype\": \"%s\", \"value\": %.17g}",
                              dtype_name<T>(), static_cast<double>(value));
            else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
                std::snprintf(text, sizeof text, "{\"kind\": \"scalar\", \"dtype\": \"%s\", \"value\": %lld}",
                              dtype_name<T>(), static_cast<long long>(value));
            else if constexpr (std::is_integral_v<T>)
                std::snprintf(text, sizeof text, "{\"kind\": \"scalar\", \"dtype\": \"%s\", \"value\": %llu}",
                              dtype_name<T>(), static_cast<unsigned long long>(value));
            else if constexpr (std::is_enum_v<T>)  // a mode or flag: its integer, cast back at the task's launch
                std::snprintf(text, sizeof text, "{\"kind\": \"scalar\", \"dtype\": \"%s\", \"value\": %lld}",
                              dtype_name<std::underlying_type_t<T>>(), static_cast<long long>(value));
            else if constexpr (std::is_empty_v<T>)  // a functor: a placeholder byte, the task makes one anew
                std::snprintf(text, sizeof text, "{\"kind\": \"scalar\", \"dtype\": \"uint8\", \"value\": 0, "
                              "\"stateless\": true}");
            else
                std::snprintf(text, sizeof text, "{\"kind\": \"other\", \"bytes\": %zu}", sizeof(T));
            open_arg(i, text);
        }
    }

    void finish() {
        std::fprintf(meta_, "], \"changed\": [");
        for (std::size_t k = 0; k < changed_.size(); ++k) std::fprintf(meta_, "%s%d", k ? ", " : "", changed_[k]);
        std::fprintf(meta_, "]}\n");
        std::fclose(meta_);
        std::rename((prefix_ + ".json.part").c_str(), (prefix_ + ".json").c_str());
    }

  private:
    void open_arg(int i, const char* text) { std::fprintf(meta_, "%s%s", i ? ", " : "", text); }

    // FNV-1a over 64-bit words: tells a buffer's contents after a launch from those before it.
    static std::uint64_t digest(const void* data, std::size_t bytes) {
        const unsigned char* p = static_cast<const unsigned char*>(data);
        std::uint64_t h = 1469598103934665603ull;
        std::size_t i = 0;
        for (; i + 8 <= bytes; i += 8) {
            std::uint64_t word;
            std::memcpy(&word, p + i, 8);
            h = (h ^ word) * 1099511628211ull;
        }
        for (; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
        return h;
    }

    // What all captures of this process may write (CUDACPU_CAPTURE_BYTES, default 2 GiB: real
    // applications pass buffers of hundreds of MiB, and a kernel not captured is not tuned).
    // A buffer is written once, within the process's file size limit, which would kill the writer.
    static bool budget_allows(std::size_t bytes) {
        static std::size_t left = [] {
            const char* env = std::getenv("CUDACPU_CAPTURE_BYTES");
            return env ? static_cast<std::size_t>(std::strtoull(env, nullptr, 10)) : std::size_t{2} << 30;
        }();
        rlimit file_limit{};
        if (getrlimit(RLIMIT_FSIZE, &file_limit) == 0 && file_limit.rlim_cur != RLIM_INFINITY &&
            bytes >= file_limit.rlim_cur)
            return false;
        if (bytes > left) return false;
        left -= bytes;
        return true;
    }
    std::vector<int> too_large_;
    std::map<int, std::uint64_t> before_digest_;
    std::vector<int> changed_;
    std::string prefix_;
    FILE* meta_ = nullptr;
};

template <class Tuple, std::size_t... I>
void capture_all(Capture& capture, const Tuple& params, const char* when, std::index_sequence<I...>) {
    (capture.argument(static_cast<int>(I), std::get<I>(params), when), ...);
}

// The template arguments of a lowered kernel's specialization as g++ spells them (`float, 4`).
// A launch inside a host template names them by the host's own parameters (`TData`): only the
// instantiation knows the types, which a captured kernel task and a tuned version must name.
// `pretty` is g++'s __PRETTY_FUNCTION__ of cudacpu_template_arguments: "... [with auto Kernel = ns::k<float, 4>]".
inline std::string specialization_arguments(const std::string& pretty) {
    const auto open = pretty.find('<', pretty.find("cudacpu_kernels::"));
    const auto close = pretty.rfind('>');
    return open == std::string::npos || close == std::string::npos || close < open
               ? std::string() : pretty.substr(open + 1, close - open - 1);
}

// The name of a lowered kernel (`k` of "... [with auto Kernel = cudacpu_kernels::k<float>]"), for a
// launch in a macro's body, where the kernel may be the macro's parameter.
inline std::string kernel_identifier(const std::string& pretty) {
    const std::string scope = "cudacpu_kernels::";
    const auto at = pretty.find(scope);
    if (at == std::string::npos) return std::string();
    const auto start = at + scope.size();
    return pretty.substr(start, pretty.find_first_of("<]; ", start) - start);
}

template <auto Kernel>
const char* cudacpu_kernel_name() {
    static const std::string text = kernel_identifier(__PRETTY_FUNCTION__);
    return text.c_str();
}

template <auto Kernel>
const char* cudacpu_template_arguments() {
    static const std::string text = specialization_arguments(__PRETTY_FUNCTION__);
    return text.c_str();
}

template <class... P, class... A>
void cudacpu_kernel_launch(const char* kernel, const char* template_args, void (*faithful)(dim3, dim3, std::size_t, P...), dim3 grid,
            dim3 block, std::size_t shared, A&&... args) {
    std::tuple<P...> params{static_cast<P>(std::forward<A>(args))...};
    auto order = std::index_sequence_for<P...>{};
    Capture capture(kernel, template_args, grid, block, shared);
    if (capture.active()) capture_all(capture, params, "before", order);
    const auto started = std::chrono::steady_clock::now();
    auto found = tuned().find(tuned_key(kernel, template_args));
    bool done = false;
    if (found != tuned().end()) {
        void* pointers[sizeof...(P) + 1] = {};
        std::apply([&](auto&... p) { std::size_t i = 0; ((pointers[i++] = const_cast<void*>(static_cast<const void*>(&p))), ...); }, params);
        done = found->second(grid, block, shared, pointers);
    }
    if (!done) std::apply([&](P... p) { faithful(grid, block, shared, p...); }, params);
    if (capture_dir())
        LaunchTimes::get().add(kernel, template_args,
                               std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    if (capture.active()) {
        capture_all(capture, params, "after", order);
        capture.finish();
    }
}

}  // namespace cudacpu_launch
