#include "rtmem/diag/tag.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "violation_recorder.hpp"

namespace {

TEST(Tag, HierarchicalPathsInternTheirParentsOnce) {
    const rtmem::tag textures{"render/textures"};
    const rtmem::tag render{"render"};
    EXPECT_EQ(textures.path(), "render/textures");
    EXPECT_EQ(textures.leaf(), "textures");
    EXPECT_EQ(textures.parent(), render);
    EXPECT_EQ(render.parent(), rtmem::tag{});
    EXPECT_EQ(textures.depth(), 2u);
    EXPECT_EQ(rtmem::tag{"render/textures"}, textures) << "interned: same id";
    EXPECT_TRUE(textures.is_within(render));
    EXPECT_TRUE(textures.is_within(rtmem::tag{}));
    EXPECT_FALSE(render.is_within(textures));
    EXPECT_FALSE(rtmem::tag{"audio"}.is_within(render));
}

TEST(Tag, RootIsTheDefault) {
    const rtmem::tag root;
    EXPECT_TRUE(root.is_root());
    EXPECT_EQ(root.path(), "");
    EXPECT_EQ(rtmem::tag{""}, root);
    EXPECT_EQ(root.parent(), root);
}

TEST(Tag, InvalidPathsAreViolationsAndGiveTheRoot) {
    rtmem::testing::violation_recorder rec;
    EXPECT_TRUE(rtmem::tag{"render//x"}.is_root());
    EXPECT_TRUE(rtmem::tag{"/render"}.is_root());
    EXPECT_TRUE(rtmem::tag{std::string(500, 'a')}.is_root());
    EXPECT_EQ(rec.count(rtmem::violation_kind::bad_argument), 3u);
}

TEST(Tag, ScopesNestPerThread) {
    const rtmem::tag physics{"physics"}, broad{"physics/broadphase"};
    EXPECT_TRUE(rtmem::current_tag().is_root());
    {
        rtmem::tag_scope a{physics};
        EXPECT_EQ(rtmem::current_tag(), physics);
        {
            rtmem::tag_scope b{broad};
            EXPECT_EQ(rtmem::current_tag(), broad);
            std::thread([] { EXPECT_TRUE(rtmem::current_tag().is_root()); }).join();
        }
        EXPECT_EQ(rtmem::current_tag(), physics);
    }
    EXPECT_TRUE(rtmem::current_tag().is_root());
}

TEST(Tag, ConcurrentInterningAgrees) {
    rtmem::tag seen[4];
    std::thread threads[4];
    for (int i = 0; i < 4; ++i)
        threads[i] = std::thread([&seen, i] { seen[i] = rtmem::tag{"net/sockets/buffers"}; });
    for (auto& t : threads) t.join();
    for (const auto& t : seen) EXPECT_EQ(t, seen[0]);
    EXPECT_EQ(seen[0].path(), "net/sockets/buffers");
}
}  // namespace
