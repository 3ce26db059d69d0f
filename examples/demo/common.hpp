// Shared vocabulary of the game-loop demo: parameters, math, deterministic random numbers and
// the hashes that make up the final-state checksum. Nothing here allocates.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

/// Game functions that allocate stay out of line, as functions of a real engine spread over
/// translation units would; then a profile or trace names them instead of the frame loop they
/// would otherwise be inlined into. Both variants get the same treatment.
#if defined(__GNUC__) || defined(__clang__)
#define DEMO_FUNCTION __attribute__((noinline))
#else
#define DEMO_FUNCTION
#endif

namespace demo {

/// Workload knobs. Everything that happens is a function of these, so two runs with the same
/// parameters (and any memory source) produce the same simulation and the same checksum.
struct config {
    std::uint32_t frames = 1200;    // 20 s of simulated time at 60 Hz
    std::uint32_t entities = 4000;  // long-lived objects created at start
    std::uint64_t seed = 1;
    std::uint32_t views = 4;               // main camera + 3 shadow cascades
    std::uint32_t emitters = 24;           // particle emitters, attached to entities
    std::uint32_t spawn_per_emitter = 25;  // mean particles spawned per emitter per frame
    std::uint32_t stream_period = 120;     // frames between level-chunk loads (2 s)
    std::uint32_t resident_chunks = 4;     // chunks kept loaded; the oldest is unloaded
    float dt = 1.0f / 60.0f;
};

struct vec3 {
    float x = 0, y = 0, z = 0;
    friend vec3 operator+(vec3 a, vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
    friend vec3 operator-(vec3 a, vec3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
    friend vec3 operator*(vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
    vec3& operator+=(vec3 b) { return *this = *this + b; }
    friend float dot(vec3 a, vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
};

/// splitmix64: tiny, fast, and good enough for a workload generator.
struct rng {
    std::uint64_t state;
    explicit rng(std::uint64_t seed) : state(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    std::uint32_t below(std::uint32_t n) {
        return static_cast<std::uint32_t>((next() >> 32) * n >> 32);
    }
    float unit() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }  // [0, 1)
    float range(float lo, float hi) { return lo + (hi - lo) * unit(); }
};

/// A stream of random numbers private to (seed, a, b): lets any part of the frame draw numbers
/// without depending on the order other parts drew theirs.
inline rng stream(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    rng r{seed ^ (a * 0xD6E8FEB86659FD93ull) ^ (b * 0xA0761D6478BD642Full)};
    r.next();
    return r;
}

inline std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xFF51AFD7ED558CCDull;
}
inline std::uint64_t mix(std::uint64_t h, std::uint32_t v) {
    return mix(h, std::uint64_t{v});
}
inline std::uint64_t mix(std::uint64_t h, float f) {
    return mix(h, std::bit_cast<std::uint32_t>(f));
}
inline std::uint64_t mix(std::uint64_t h, vec3 v) {
    return mix(mix(mix(h, v.x), v.y), v.z);
}

inline std::uint64_t hash_bytes(const void* data, std::size_t n,
                                std::uint64_t h = 1469598103934665603ull) {
    auto p = static_cast<const unsigned char*>(data);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}
inline std::uint64_t hash_string(std::string_view s) {
    return hash_bytes(s.data(), s.size());
}

}  // namespace demo
