// The topic database (topic_store.hpp): what is written is read back by the next process, in the
// order written; bad directories and a second user are refused at start-up.
#include <moraine/icestorm_bridge/topic_store.hpp>

#include <boost/asio/io_context.hpp>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace moraine;
using namespace moraine::icestorm_bridge;
namespace fs = std::filesystem;

namespace {

class topic_store_test : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("moraine-topic-store-" + std::to_string(::getpid()) + "-" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }

    /// A completion that records its outcome; run io_ to deliver it.
    topic_store::done_fn record() {
        return [this](const std::string& error) { outcomes_.push_back(error); };
    }
    /// Runs the completions of `n` writes (they arrive on io_, in order).
    void settle(std::size_t n) {
        while (outcomes_.size() < n) {
            io_.restart();
            io_.run_one_for(std::chrono::seconds(5));
        }
    }

    static protocol::proxy proxy(const std::string& text) { return *protocol::proxy_from_string(text); }

    fs::path dir_;
    boost::asio::io_context io_;
    std::vector<std::string> outcomes_;
};

TEST_F(topic_store_test, written_then_read_by_the_next_instance) {
    {
        topic_store st(dir_.string(), io_.get_executor());
        EXPECT_TRUE(st.load().topics.empty());
        st.put_topic("time", record());
        st.put_topic("news", record());
        st.put_subscriber("time", proxy("sub1 -o:tcp -h 127.0.0.1 -p 5000"), {{"retryCount", "2"}}, record());
        st.put_subscriber("news", proxy("cat/sub2:tcp -h 127.0.0.1 -p 5001"), {{"reliability", "ordered"}}, record());
        st.put_link("time", link_info{proxy("IceStorm/topic.news:tcp -h 127.0.0.1 -p 10000"), "news", 3,
                                      proxy("IceStorm/news.link:tcp -h 127.0.0.1 -p 10001")},
                    record());
        settle(5);
    }
    EXPECT_EQ(outcomes_, std::vector<std::string>(5));
    topic_store st(dir_.string(), io_.get_executor());
    auto c = st.load();
    EXPECT_EQ(c.topics, (std::vector<std::string>{"news", "time"}));
    ASSERT_EQ(c.subscribers.size(), 2u);
    for (const auto& s : c.subscribers) {
        if (s.topic == "time") {
            EXPECT_EQ(s.proxy.id.name, "sub1");
            EXPECT_EQ(s.proxy.mode, static_cast<std::uint8_t>(protocol::proxy_mode::oneway));
            EXPECT_EQ(s.proxy.endpoints.at(0).port, 5000);
            EXPECT_EQ(s.qos, (std::vector<std::pair<std::string, std::string>>{{"retryCount", "2"}}));
        } else {
            EXPECT_EQ(s.topic, "news");
            EXPECT_EQ(s.proxy.id.category, "cat");
        }
    }
    ASSERT_EQ(c.links.size(), 1u);
    EXPECT_EQ(c.links[0].topic, "time");
    EXPECT_EQ(c.links[0].link.name, "news");
    EXPECT_EQ(c.links[0].link.cost, 3);
    EXPECT_EQ(c.links[0].link.link.id.name, "news.link");
}

TEST_F(topic_store_test, erasing_a_topic_takes_its_subscribers_and_links) {
    {
        topic_store st(dir_.string(), io_.get_executor());
        st.put_topic("a", record());
        st.put_topic("b", record());
        st.put_subscriber("a", proxy("s1:tcp -p 1"), {}, record());
        st.put_subscriber("a", proxy("s2:tcp -p 1"), {}, record());
        st.put_subscriber("b", proxy("s3:tcp -p 1"), {}, record());
        st.put_link("a", link_info{proxy("I/topic.b:tcp -p 2"), "b", 0, proxy("I/b.link:tcp -p 3")}, record());
        st.erase_subscriber("a", "s2", record());
        st.erase_topic("b", record());
        st.erase_link("a", "I/topic.b", record());  // a link is known by the linked topic's identity
        settle(9);
    }
    topic_store st(dir_.string(), io_.get_executor());
    auto c = st.load();
    EXPECT_EQ(c.topics, (std::vector<std::string>{"a"}));
    ASSERT_EQ(c.subscribers.size(), 1u);
    EXPECT_EQ(c.subscribers[0].proxy.id.name, "s1");
    EXPECT_TRUE(c.links.empty());
}

TEST_F(topic_store_test, links_of_one_name_in_two_services_are_two_rows) {
    {
        topic_store st(dir_.string(), io_.get_executor());
        st.put_topic("a", record());
        st.put_link("a", link_info{proxy("edge1/topic.t:tcp -p 2"), "t", 0, proxy("edge1/t.link:tcp -p 3")}, record());
        st.put_link("a", link_info{proxy("edge2/topic.t:tcp -p 4"), "t", 0, proxy("edge2/t.link:tcp -p 5")}, record());
        settle(3);
    }
    {
        topic_store st(dir_.string(), io_.get_executor());
        auto c = st.load();
        ASSERT_EQ(c.links.size(), 2u) << "keyed by identity, not by the bare name";
        EXPECT_EQ(c.links[0].link.name, "t");
        EXPECT_EQ(c.links[1].link.name, "t");
        st.erase_link("a", "edge1/topic.t", record());
        settle(4);
    }
    topic_store st(dir_.string(), io_.get_executor());
    auto c = st.load();
    ASSERT_EQ(c.links.size(), 1u);
    EXPECT_EQ(c.links[0].link.key(), "edge2/topic.t");
}

TEST_F(topic_store_test, a_version_1_database_is_rekeyed_by_identity) {
    {
        topic_store st(dir_.string(), io_.get_executor());
        st.put_topic("a", record());
        st.put_link("a", link_info{proxy("edge1/topic.t:tcp -p 2"), "t", 0, proxy("edge1/t.link:tcp -p 3")}, record());
        settle(2);
    }
    {  // What version 1 wrote: the link keyed by the linked topic's bare name.
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open((dir_ / "moraine-topics.sqlite3").string().c_str(), &db), SQLITE_OK);
        ASSERT_EQ(sqlite3_exec(db, "UPDATE links SET linked='t'; PRAGMA user_version=1;", nullptr, nullptr, nullptr),
                  SQLITE_OK);
        sqlite3_close(db);
    }
    {
        topic_store st(dir_.string(), io_.get_executor());
        auto c = st.load();
        ASSERT_EQ(c.links.size(), 1u);
        EXPECT_EQ(c.links[0].link.name, "t") << "the name comes from the stored proxy";
        st.erase_link("a", "edge1/topic.t", record());  // found under its new key
        settle(3);
    }
    topic_store st(dir_.string(), io_.get_executor());
    EXPECT_TRUE(st.load().links.empty());
}

TEST_F(topic_store_test, a_burst_of_changes_is_stored_whole_and_in_order) {
    constexpr int n = 300;  // queued faster than one commit: most share a transaction
    {
        topic_store st(dir_.string(), io_.get_executor());
        st.put_topic("burst", record());
        for (int i = 0; i < n; ++i)
            st.put_subscriber("burst", proxy("s" + std::to_string(i) + ":tcp -p 1"), {}, record());
        for (int i = 0; i < n; i += 2) st.erase_subscriber("burst", "s" + std::to_string(i), record());
        settle(1 + n + n / 2);
    }
    EXPECT_EQ(outcomes_, std::vector<std::string>(1 + n + n / 2));
    topic_store st(dir_.string(), io_.get_executor());
    auto c = st.load();
    ASSERT_EQ(c.subscribers.size(), static_cast<std::size_t>(n / 2));
    for (const auto& s : c.subscribers) EXPECT_EQ(std::stoi(s.proxy.id.name.substr(1)) % 2, 1) << s.proxy.id.name;
}

TEST_F(topic_store_test, refuses_a_missing_directory_and_a_second_user_until_the_first_closes) {
    try {
        topic_store absent((dir_ / "absent").string(), io_.get_executor());
        FAIL() << "a store in a missing directory was opened";
    } catch (const store_held&) {
        FAIL() << "a missing directory is not a held database";
    } catch (const store_error&) {
    }
    auto first = std::make_unique<topic_store>(dir_.string(), io_.get_executor());
    first->put_topic("kept", record());
    try {
        topic_store second(dir_.string(), io_.get_executor());
        FAIL() << "a second store on one directory was opened";
    } catch (const store_held& e) {  // what a takeover's new process waits out
        EXPECT_NE(std::string(e.what()).find("locked"), std::string::npos) << e.what();
    }
    first.reset();  // finishes the queued write, then lets go of the file
    topic_store second(dir_.string(), io_.get_executor());
    EXPECT_EQ(second.load().topics, std::vector<std::string>{"kept"});
}

TEST_F(topic_store_test, refuses_a_file_that_is_not_a_topic_database) {
    {
        std::FILE* f = std::fopen((dir_ / "moraine-topics.sqlite3").c_str(), "w");
        std::fputs("not a database, just text that is long enough to be read as a header......", f);
        std::fclose(f);
    }
    EXPECT_THROW(topic_store(dir_.string(), io_.get_executor()), store_error);
}

}  // namespace
