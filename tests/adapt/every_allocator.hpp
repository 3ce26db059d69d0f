// The list of rtmem allocators the adapter tests run on: one factory per allocator, each owning
// the allocator (and whatever it needs) for one test. Add a factory when an allocator lands.
#pragma once
#include <gtest/gtest.h>

#include <memory>

#include "rtmem/core/malloc_allocator.hpp"
#include "rtmem/core/page_allocator.hpp"
#include "rtmem/diag/guarded.hpp"
#include "rtmem/diag/tracked.hpp"
#include "rtmem/sync/locked.hpp"
#include "rtmem/sync/spin_mutex.hpp"

namespace rtmem::testing {

struct malloc_factory {
    using type = malloc_allocator;
    malloc_allocator a;
    type& get() { return a; }
};

struct page_factory {
    using type = page_allocator;
    page_allocator a;
    type& get() { return a; }
};

struct locked_malloc_factory {
    using type = locked<malloc_allocator, spin_mutex>;
    type a;
    type& get() { return a; }
};

struct tracked_factory {
    using type = tracked<malloc_allocator>;
    malloc_allocator up;
    type a{up};
    type& get() { return a; }
};

struct guarded_factory {
    using type = guarded<malloc_allocator>;
    malloc_allocator up;
    type a{up};
    type& get() { return a; }
};

using every_allocator = ::testing::Types<malloc_factory, page_factory, locked_malloc_factory,
                                         tracked_factory, guarded_factory>;

}  // namespace rtmem::testing
