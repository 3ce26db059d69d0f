// The game: one frame-based simulation, written once, parameterised by a memory policy M that
// decides where every byte comes from. Both variants run exactly this code.
//
// A memory policy M provides (see baseline_memory.hpp and rtmem_memory.hpp):
//   temporaries  M::scope temp_scope();  M::temp_vector<T> temp_vector<T>();
//                M::temp_string temp_string();      valid until the enclosing scope ends
//   long-lived   T* create<T>(args...);  void destroy(T*);  M::string make_string(sv);
//                M::vector<T> make_vector<T>();
//   render       M::command_queue (for_each, retire, push(nparams) -> M::command&,
//                size); void begin_frame(command_queue&) before a frame fills it
//   particles    M::particle_store (spawn(emitter&, id, seed, state), update(dt),
//                for_each(f(state, id, emitter*)), size)
//   levels       void* level_temp(slot, n); void level_temp_free(slot, p, n);
//                void* level_asset(slot, n); void level_asset_free(slot, p, n);
//                void level_unload(slot)
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <utility>

#include "common.hpp"
#include "particles.hpp"
#include "render_thread.hpp"
#include "rtmem.h"

namespace demo {

/// The parameters every draw command carries; Params is the policy's block of floats.
template <class Params>
struct draw_command {
    std::uint64_t sort_key = 0;
    std::uint64_t label = 0;
    std::uint32_t mesh = 0;
    std::uint32_t material = 0;
    float transform[12] = {};
    Params params;
};

template <class String>
struct entity {
    explicit entity(String n) : name(std::move(n)) {}  // keeps the string's allocator
    vec3 position;
    vec3 velocity;
    float radius = 1;
    std::uint32_t id = 0;
    std::uint32_t mesh = 0;
    bool agent = false;
    String name;
};

struct asset {
    std::byte* data = nullptr;
    std::size_t size = 0;
    std::uint64_t hash = 0;
};

struct chunk {
    std::uint32_t id = 0;
    asset* assets = nullptr;
    std::uint32_t asset_count = 0;
    std::uint64_t hash = 0;
};

/// The shape of a streamed chunk, and the most memory one load can need, so the rtmem variant
/// can size its level slots once.
inline constexpr std::uint32_t min_pairs = 32768, max_pairs = 131071, max_run = 32;
inline constexpr std::uint32_t min_assets = 32, max_assets = 95, min_asset = 1024;
inline constexpr std::size_t max_packed_bytes = 2 * std::size_t{max_pairs};
inline constexpr std::size_t max_unpacked_bytes = std::size_t{max_pairs} * max_run;
inline constexpr std::size_t max_asset_bytes = max_unpacked_bytes +
                                               max_assets * (std::size_t{min_asset} + 64) +
                                               max_assets * sizeof(asset) + 64;
inline constexpr std::size_t level_slot_bytes =
    max_packed_bytes + max_unpacked_bytes + max_asset_bytes + 128;

struct view {
    vec3 eye;
    vec3 direction;  // unit length
    float range = 0;
    float cos_half_angle = 0;
};

template <class M>
class game {
  public:
    using entity_t = entity<typename M::string>;
    using queue_t = typename M::command_queue;

    game(M& mem, const config& cfg)
        : mem_(mem),
          cfg_(cfg),
          entities_(mem.template make_vector<entity_t*>()),
          emitters_(mem.template make_vector<emitter>()),
          cell_start_(mem.template make_vector<std::uint32_t>()),
          cell_items_(mem.template make_vector<std::uint32_t>()),
          chunks_(mem.template make_vector<chunk>()),
          particles_(mem),
          queues_{queue_t(mem), queue_t(mem)} {
        create_world();
    }
    game(const game&) = delete;
    game& operator=(const game&) = delete;
    ~game() {
        render_.wait_idle();
        for (std::uint32_t slot = 0; slot < chunks_.size(); ++slot) unload_chunk(slot);
        for (entity_t* e : entities_) mem_.destroy(e);
    }

    void run_frame() {
        const std::uint32_t f = frame_++;
        rtmem_trace_frame();  // a frame boundary for `rtmem record` (a no-op when not traced)
        queue_t& queue = queues_[f % 2];
        mem_.begin_frame(queue);  // the render thread finished with this queue two frames ago
        if (f > 0 && f % cfg_.stream_period == 0) stream_next_chunk();
        rebuild_grid();
        steer_agents();
        move_entities();
        simulate_particles();
        for (std::uint32_t v = 0; v < cfg_.views; ++v) cull_view(make_view(v, f), v, queue);
        draw_particles(queue);
        render_.wait_idle();    // last frame's queue is consumed ...
        render_.submit(queue);  // ... and this one is handed over
    }

    /// Final-state checksum: entities, particles, emitters, resident chunks and every command
    /// the render thread consumed.
    std::uint64_t checksum() {
        render_.wait_idle();
        std::uint64_t h = mix(0, render_.hash());
        for (const entity_t* e : entities_) h = mix(mix(h, e->position), e->velocity);
        std::uint64_t particle_sum = 0;  // order-independent: stores may keep any order
        particles_.for_each([&](const particle_state& s, std::uint32_t id, const emitter*) {
            particle_sum += particle_hash(s, id);
        });
        h = mix(mix(h, particle_sum), std::uint64_t{particles_.size()});
        for (const emitter& e : emitters_)
            h = mix(mix(mix(h, std::uint64_t{e.live}), e.spawned), e.retired_hash);
        for (const chunk& c : chunks_) h = mix(h, c.hash);
        return mix(h, std::uint64_t{chunks_loaded_});
    }

    std::size_t live_particles() const { return particles_.size(); }
    std::uint32_t chunks_loaded() const { return chunks_loaded_; }

  private:
    static constexpr float world_size = 400;
    static constexpr float cell_size = 10;
    static constexpr std::uint32_t cells_per_side =
        static_cast<std::uint32_t>(world_size / cell_size);

    // ---- start-up: long-lived objects ------------------------------------------------------
    DEMO_FUNCTION void create_world() {
        static constexpr std::string_view kinds[] = {"props/barrel_large",  "props/crate_wooden",
                                                     "vegetation/tree_oak", "vegetation/bush_dry",
                                                     "characters/villager", "architecture/wall"};
        rng r = stream(cfg_.seed, 0xE7);
        entities_.reserve(cfg_.entities);
        char name[96];
        for (std::uint32_t i = 0; i < cfg_.entities; ++i) {
            const std::string_view kind = kinds[r.below(6)];
            const int n = std::snprintf(name, sizeof name, "world/%.*s_%05u",
                                        static_cast<int>(kind.size()), kind.data(), i);
            entity_t* e = mem_.template create<entity_t>(
                mem_.make_string(std::string_view(name, static_cast<std::size_t>(n))));
            e->id = i;
            e->position = {r.range(0, world_size), 0, r.range(0, world_size)};
            e->velocity = {r.range(-3, 3), 0, r.range(-3, 3)};
            e->radius = r.range(0.5f, 4.0f);
            e->mesh = r.below(64);
            e->agent = r.below(4) == 0;
            entities_.push_back(e);
        }
        emitters_.resize(std::min(cfg_.emitters, cfg_.entities));
        for (std::uint32_t i = 0; i < emitters_.size(); ++i)
            emitters_[i].entity =
                i * (cfg_.entities / static_cast<std::uint32_t>(emitters_.size()));
        cell_start_.resize(cells_per_side * cells_per_side + 1);
        cell_items_.resize(cfg_.entities);
        chunks_.resize(cfg_.resident_chunks);
        for (std::uint32_t slot = 0; slot < cfg_.resident_chunks; ++slot)
            load_chunk(slot, next_chunk_++);
    }

    // ---- level streaming: temporary decompression buffers, permanent assets ----------------
    void stream_next_chunk() {
        const std::uint32_t slot = next_chunk_ % cfg_.resident_chunks;  // the oldest resident
        unload_chunk(slot);
        load_chunk(slot, next_chunk_++);
    }

    DEMO_FUNCTION void load_chunk(std::uint32_t slot, std::uint32_t id) {
        rng r = stream(cfg_.seed, 0xC4, id);
        const std::span<std::uint8_t> file = read_file(slot, r);  // temporary
        const std::span<std::byte> raw = decompress(slot, file);  // temporary
        load_assets(slot, id, r, raw);                            // kept until unload
        mem_.level_temp_free(slot, raw.data(), raw.size());
        mem_.level_temp_free(slot, file.data(), file.size());
        ++chunks_loaded_;
    }

    /// The "file": run-length pairs (byte, length), as read from disk.
    DEMO_FUNCTION std::span<std::uint8_t> read_file(std::uint32_t slot, rng& r) {
        const std::size_t packed = 2 * (min_pairs + r.below(max_pairs - min_pairs + 1));
        auto* src = static_cast<std::uint8_t*>(mem_.level_temp(slot, packed));
        for (std::size_t i = 0; i < packed; i += 2) {
            src[i] = static_cast<std::uint8_t>(r.next());
            src[i + 1] = static_cast<std::uint8_t>(1 + r.below(max_run));
        }
        return {src, packed};
    }

    DEMO_FUNCTION std::span<std::byte> decompress(std::uint32_t slot,
                                                  std::span<const std::uint8_t> file) {
        std::size_t unpacked = 0;
        for (std::size_t i = 0; i < file.size(); i += 2) unpacked += file[i + 1];
        auto* raw = static_cast<std::byte*>(mem_.level_temp(slot, unpacked));
        std::size_t at = 0;
        for (std::size_t i = 0; i < file.size(); i += 2) {
            std::memset(raw + at, file[i], file[i + 1]);
            at += file[i + 1];
        }
        return {raw, unpacked};
    }

    /// Permanent part: the asset table and each asset's bytes, kept until the chunk unloads.
    DEMO_FUNCTION void load_assets(std::uint32_t slot, std::uint32_t id, rng& r,
                                   std::span<const std::byte> raw) {
        chunk& c = chunks_[slot];
        c.id = id;
        c.asset_count = min_assets + r.below(max_assets - min_assets + 1);
        c.assets = static_cast<asset*>(mem_.level_asset(slot, c.asset_count * sizeof(asset)));
        c.hash = id;
        std::size_t offset = 0;
        for (std::uint32_t a = 0; a < c.asset_count; ++a) {
            const std::size_t size =
                min_asset + r.below(static_cast<std::uint32_t>(raw.size() / c.asset_count));
            asset& as = c.assets[a];
            as.size = size;
            as.data = static_cast<std::byte*>(mem_.level_asset(slot, size));
            for (std::size_t done = 0; done < size;) {  // copy out of the raw buffer, wrapping
                if (offset == raw.size()) offset = 0;
                const std::size_t n = std::min(size - done, raw.size() - offset);
                std::memcpy(as.data + done, raw.data() + offset, n);
                done += n;
                offset += n;
            }
            as.hash = hash_bytes(as.data, size);
            c.hash = mix(c.hash, as.hash);
        }
    }

    void unload_chunk(std::uint32_t slot) {
        chunk& c = chunks_[slot];
        if (c.assets == nullptr) return;
        for (std::uint32_t a = 0; a < c.asset_count; ++a)
            mem_.level_asset_free(slot, c.assets[a].data, c.assets[a].size);
        mem_.level_asset_free(slot, c.assets, c.asset_count * sizeof(asset));
        mem_.level_unload(slot);
        c = chunk{};
    }

    // ---- simulation --------------------------------------------------------------------------
    std::uint32_t cell_of(vec3 p) const {
        const auto cx = std::min(cells_per_side - 1,
                                 static_cast<std::uint32_t>(std::max(0.0f, p.x) / cell_size));
        const auto cz = std::min(cells_per_side - 1,
                                 static_cast<std::uint32_t>(std::max(0.0f, p.z) / cell_size));
        return cz * cells_per_side + cx;
    }

    void rebuild_grid() {  // counting sort into long-lived arrays: no allocation after start-up
        std::fill(cell_start_.begin(), cell_start_.end(), 0u);
        for (const entity_t* e : entities_) ++cell_start_[cell_of(e->position) + 1];
        for (std::size_t i = 1; i < cell_start_.size(); ++i) cell_start_[i] += cell_start_[i - 1];
        for (const entity_t* e : entities_) {
            // cell_start_[c] temporarily counts up as items are placed, then is restored below.
            cell_items_[cell_start_[cell_of(e->position)]++] = e->id;
        }
        for (std::size_t i = cell_start_.size() - 1; i > 0; --i)
            cell_start_[i] = cell_start_[i - 1];
        cell_start_[0] = 0;
    }

    /// Called once per agent per frame: a temporary list of neighbours.
    DEMO_FUNCTION vec3 steering(const entity_t& self) {
        [[maybe_unused]] auto scope = mem_.temp_scope();
        auto near = mem_.template temp_vector<std::uint32_t>();
        const auto cx = static_cast<int>(cell_of(self.position) % cells_per_side);
        const auto cz = static_cast<int>(cell_of(self.position) / cells_per_side);
        const int n = static_cast<int>(cells_per_side);
        for (int z = std::max(0, cz - 1); z <= std::min(n - 1, cz + 1); ++z) {
            for (int x = std::max(0, cx - 1); x <= std::min(n - 1, cx + 1); ++x) {
                const auto c = static_cast<std::size_t>(z * n + x);
                for (std::uint32_t i = cell_start_[c]; i < cell_start_[c + 1]; ++i) {
                    const entity_t& other = *entities_[cell_items_[i]];
                    const vec3 d = other.position - self.position;
                    if (other.id != self.id && dot(d, d) < cell_size * cell_size)
                        near.push_back(other.id);
                }
            }
        }
        if (near.empty()) return {};
        vec3 away;
        for (std::uint32_t id : near) away += self.position - entities_[id]->position;
        return away * (0.05f / static_cast<float>(near.size()));
    }

    void steer_agents() {
        for (entity_t* e : entities_) {
            if (!e->agent) continue;
            const vec3 s = steering(*e);
            e->velocity = e->velocity + s;
        }
    }

    void move_entities() {
        for (entity_t* e : entities_) {
            e->position += e->velocity * cfg_.dt;
            if (e->position.x < 0 || e->position.x > world_size) e->velocity.x = -e->velocity.x;
            if (e->position.z < 0 || e->position.z > world_size) e->velocity.z = -e->velocity.z;
        }
    }

    DEMO_FUNCTION void simulate_particles() {
        for (std::uint32_t i = 0; i < emitters_.size(); ++i) {
            emitter& em = emitters_[i];
            em.position = entities_[em.entity]->position;
            rng r = stream(cfg_.seed, 0x9A + frame_, i);
            const std::uint32_t count = r.below(2 * cfg_.spawn_per_emitter + 1);
            for (std::uint32_t k = 0; k < count; ++k) {
                const std::uint64_t seed = r.next();
                particles_.spawn(em, next_particle_++, seed, initial_state(em, seed));
            }
        }
        particles_.update(cfg_.dt);
    }

    // ---- rendering ---------------------------------------------------------------------------
    view make_view(std::uint32_t v, std::uint32_t f) const {
        const float t = static_cast<float>(f) * cfg_.dt * 0.2f + static_cast<float>(v) * 1.7f;
        const vec3 centre{world_size / 2, 0, world_size / 2};
        view out;
        out.eye = centre + vec3{std::cos(t) * 150.0f, 20, std::sin(t) * 150.0f};
        out.direction = vec3{-std::cos(t), 0, -std::sin(t)};
        out.range = v == 0 ? 260.0f : 120.0f * static_cast<float>(v);
        out.cos_half_angle = v == 0 ? 0.5f : 0.7f;
        return out;
    }

    /// Called once per view per frame: a temporary visibility list and sort scratch.
    DEMO_FUNCTION void cull_view(const view& vw, std::uint32_t v, queue_t& queue) {
        [[maybe_unused]] auto scope = mem_.temp_scope();
        auto visible = mem_.template temp_vector<std::uint32_t>();
        for (const entity_t* e : entities_) {
            const vec3 d = e->position - vw.eye;
            const float along = dot(d, vw.direction);
            if (along < -e->radius || along > vw.range + e->radius) continue;
            const float len2 = dot(d, d);
            if (along * along < vw.cos_half_angle * vw.cos_half_angle * len2 &&
                len2 > e->radius * e->radius)
                continue;
            visible.push_back(e->id);
        }
        struct key {
            std::uint64_t order;
            std::uint32_t id;
        };
        auto keys = mem_.template temp_vector<key>();
        keys.reserve(visible.size());
        for (std::uint32_t id : visible) {
            const entity_t& e = *entities_[id];
            const float depth = dot(e.position - vw.eye, vw.direction);
            const auto quantised = static_cast<std::uint64_t>(std::max(0.0f, depth) * 64.0f);
            keys.push_back({(std::uint64_t{e.mesh} << 48) | (quantised << 20) | id, id});
        }
        std::sort(keys.begin(), keys.end(),
                  [](const key& a, const key& b) { return a.order < b.order; });
        for (const key& k : keys) {
            const entity_t& e = *entities_[k.id];
            const std::uint32_t nparams = v == 0 ? 4 + e.mesh % 13 : 4;
            auto& cmd = queue.push(nparams);
            cmd.sort_key = k.order;
            cmd.label = v == 0 ? debug_label(e, v, k.order) : k.id;
            cmd.mesh = e.mesh;
            const chunk& c = chunks_[e.id % chunks_.size()];
            cmd.material = static_cast<std::uint32_t>(c.assets[e.mesh % c.asset_count].hash);
            cmd.transform[0] = cmd.transform[5] = cmd.transform[10] = e.radius;
            cmd.transform[3] = e.position.x;
            cmd.transform[7] = e.position.y;
            cmd.transform[11] = e.position.z;
            for (std::uint32_t i = 0; i < nparams; ++i)
                cmd.params[i] = static_cast<float>(i) * e.radius + vw.range;
        }
    }

    /// Called for every visible object of the main view: a temporary formatted string.
    DEMO_FUNCTION std::uint64_t debug_label(const entity_t& e, std::uint32_t v, std::uint64_t key) {
        [[maybe_unused]] auto scope = mem_.temp_scope();
        auto s = mem_.temp_string();
        char number[24];
        s.append(e.name.data(), e.name.size());
        s.append(" lod");
        s.append(number,
                 static_cast<std::size_t>(std::snprintf(number, sizeof number, "%u", e.mesh % 4)));
        s.append(" view");
        s.append(number, static_cast<std::size_t>(std::snprintf(number, sizeof number, "%u", v)));
        s.append(" key=");
        s.append(number, static_cast<std::size_t>(std::snprintf(
                             number, sizeof number, "%llx", static_cast<unsigned long long>(key))));
        return hash_string(std::string_view(s.data(), s.size()));
    }

    DEMO_FUNCTION void draw_particles(queue_t& queue) {
        // Per emitter: count and an order-independent hash of its particles, one command each.
        [[maybe_unused]] auto scope = mem_.temp_scope();
        auto sums = mem_.template temp_vector<std::uint64_t>();
        sums.resize(emitters_.size());
        auto counts = mem_.template temp_vector<std::uint32_t>();
        counts.resize(emitters_.size());
        particles_.for_each([&](const particle_state& s, std::uint32_t id, const emitter* e) {
            const auto owner = static_cast<std::size_t>(e - emitters_.data());
            sums[owner] += particle_hash(s, id);
            ++counts[owner];
        });
        for (std::uint32_t i = 0; i < emitters_.size(); ++i) {
            auto& cmd = queue.push(2);
            cmd.sort_key = ~std::uint64_t{0} - i;
            cmd.label = sums[i];
            cmd.mesh = 1000 + i;
            cmd.params[0] = static_cast<float>(counts[i]);
            cmd.params[1] = static_cast<float>(emitters_[i].live);
        }
    }

    M& mem_;
    config cfg_;
    typename M::template vector<entity_t*> entities_;
    typename M::template vector<emitter> emitters_;
    typename M::template vector<std::uint32_t> cell_start_;
    typename M::template vector<std::uint32_t> cell_items_;
    typename M::template vector<chunk> chunks_;
    typename M::particle_store particles_;
    queue_t queues_[2];
    render_thread<queue_t> render_;  // last: joins before the queues it reads are destroyed
    std::uint32_t frame_ = 0;
    std::uint32_t next_chunk_ = 0;
    std::uint32_t chunks_loaded_ = 0;
    std::uint32_t next_particle_ = 0;
};

}  // namespace demo
