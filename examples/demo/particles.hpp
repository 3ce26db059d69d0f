// Particle pieces shared by both variants: the hot simulation state, the cold body whose
// constructor and destructor do real work (register with the emitter, derive a colour), and
// the update rule. Where particles live is the memory policy's business.
#pragma once
#include <cstdint>

#include "common.hpp"

namespace demo {

struct emitter {
    vec3 position;
    std::uint32_t entity = 0;
    std::uint32_t live = 0;  // particles currently registered
    std::uint64_t spawned = 0;
    std::uint64_t retired_hash = 0;  // order-independent sum over retired particles
};

/// What the update loop touches every frame (32 bytes).
struct particle_state {
    vec3 position;
    vec3 velocity;
    float age = 0;
    float lifetime = 0;
};

/// What the loop does not touch: identity and appearance. Activation registers with the
/// emitter and computes the colour (a few transcendental calls, as a real constructor would);
/// the constructor activates, the destructor deactivates. A pool that constructs objects once
/// calls activate/deactivate itself on reuse, so both variants do the same work per particle.
class particle_body {
  public:
    particle_body() = default;
    particle_body(emitter& owner, std::uint32_t id, std::uint64_t seed) {
        activate(owner, id, seed);
    }
    ~particle_body() {
        if (owner_ != nullptr) deactivate();
    }
    particle_body(const particle_body&) = delete;
    particle_body& operator=(const particle_body&) = delete;

    void activate(emitter& owner, std::uint32_t id, std::uint64_t seed) {
        owner_ = &owner;
        id_ = id;
        seed_ = seed;
        const float h = static_cast<float>(seed & 0xFFFF) * (6.2831853f / 65536.0f);
        colour_[0] = 0.5f + 0.5f * std::sin(h);
        colour_[1] = 0.5f + 0.5f * std::sin(h + 2.0943951f);
        colour_[2] = 0.5f + 0.5f * std::sin(h + 4.1887902f);
        colour_[3] = 1.0f;
        spin_ = std::cos(h) * 3.0f;
        ++owner_->live;
        ++owner_->spawned;
    }
    void deactivate() {
        --owner_->live;
        owner_->retired_hash += mix(mix(mix(id_, colour_[0]), colour_[1]), spin_);
        owner_ = nullptr;
    }

    std::uint32_t id() const { return id_; }
    std::uint64_t seed() const { return seed_; }
    const emitter* owner() const { return owner_; }

  private:
    emitter* owner_ = nullptr;
    std::uint32_t id_ = 0;
    std::uint64_t seed_ = 0;
    float colour_[4] = {};
    float spin_ = 0;
};

inline particle_state initial_state(const emitter& e, std::uint64_t seed) {
    rng r{seed};
    particle_state s;
    s.position = e.position + vec3{r.range(-1, 1), r.range(0, 2), r.range(-1, 1)};
    s.velocity = {r.range(-4, 4), r.range(2, 9), r.range(-4, 4)};
    s.lifetime = r.range(0.4f, 1.6f);
    return s;
}

/// One simulation step, on fields wherever they live (a struct or SoA columns); returns false
/// when the particle has died.
inline bool step(vec3& position, vec3& velocity, float& age, float lifetime, float dt) {
    velocity.y -= 9.81f * dt;
    position += velocity * dt;
    if (position.y < 0) {
        position.y = -position.y;
        velocity.y = -velocity.y * 0.5f;
    }
    age += dt;
    return age < lifetime;
}

inline std::uint64_t particle_hash(const particle_state& s, std::uint32_t id) {
    return mix(mix(mix(id, s.position), s.velocity), s.age);
}

}  // namespace demo
