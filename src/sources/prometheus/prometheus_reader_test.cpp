#include "sources/prometheus/prometheus_reader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "core/testing/free_port.h"
#include "sources/prometheus/prometheus_http.h"
#include "sources/prometheus/series_merge.h"

namespace vw::prometheus {
namespace {

namespace fs = std::filesystem;
using ::testing::AnyOf;
using ::testing::HasSubstr;

TEST(PrometheusReader, StepKeepsSeriesUnderElevenThousandPoints) {
  struct Case {
    double range_s, step_s;
  } cases[] = {{3600, 1}, {11000, 1}, {11001, 2}, {12 * 3600, 4}, {30 * 86400, 236}, {0, 1}};
  for (const auto& c : cases) EXPECT_DOUBLE_EQ(ChooseStep(c.range_s), c.step_s) << c.range_s;
}

TEST(PrometheusReader, UnitsParseAndUnknownOnesAreRejected) {
  EXPECT_EQ(*ParseValueUnit("MiB"), ValueUnit::kMiB);
  EXPECT_EQ(*ParseValueUnit("bytes"), ValueUnit::kBytes);
  EXPECT_EQ(*ParseValueUnit("auto"), ValueUnit::kAuto);
  EXPECT_FALSE(ParseValueUnit("MB").ok());
}

TEST(PrometheusReader, GpuIdentityComesFromDcgmAndOwnLabels) {
  auto dcgm = IdentityFromLabels({{"gpu", "3"},
                                  {"UUID", "GPU-abc"},
                                  {"Hostname", "node-1"},
                                  {"modelName", "NVIDIA A100-SXM4-80GB"},
                                  {"pci_bus_id", "00000000:07:00.0"}});
  EXPECT_EQ(dcgm.key, "node-1/3");
  EXPECT_EQ(dcgm.index, 3);
  EXPECT_EQ(dcgm.uuid, "GPU-abc");
  EXPECT_EQ(dcgm.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(dcgm.pci_bus_id, "00000000:07:00.0");
  auto own = IdentityFromLabels({{"gpu", "0"}, {"uuid", "GPU-x"}, {"hostname", "n2"}, {"model_name", "H100"}});
  EXPECT_EQ(own.key, "n2/0");
  EXPECT_EQ(own.uuid, "GPU-x");
  auto by_instance = IdentityFromLabels({{"uuid", "GPU-y"}, {"instance", "10.0.0.5:9400"}});
  EXPECT_EQ(by_instance.key, "10.0.0.5:9400/GPU-y");
  EXPECT_FALSE(by_instance.index.has_value());
}

TEST(PrometheusReader, ParsesAMatrixConvertingDcgmMibToBytes) {
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"0","Hostname":"n1"},
     "values":[[1700000000,"100"],[1700000015,"101.5"],[1700000030,"NaN"]]}]}})";
  auto s = ParseQueryResponse(body, "DCGM_FI_DEV_FB_USED", ValueUnit::kAuto);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->series.size(), 1u);
  const auto& r = s->series[0].points;
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(s->series[0].unit, ValueUnit::kMiB);
  EXPECT_DOUBLE_EQ(r[0].t, 1700000000);
  EXPECT_EQ(*r[0].used_bytes, 100u * 1048576u);
  EXPECT_EQ(*r[1].used_bytes, 106430464u);  // 101.5 MiB
  EXPECT_FALSE(r[2].used_bytes.has_value()) << "NaN is missing, not 0";
  EXPECT_EQ(s->series[0].gpu.key, "n1/0");
}

TEST(PrometheusReader, UnitComesFromTheQueryWhenSeriesHaveNoName) {
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"gpu":"0"},"values":[[1,"2"]]}]}})";
  auto mib = ParseQueryResponse(body, "max_over_time(DCGM_FI_DEV_FB_USED[5m])", ValueUnit::kAuto);
  ASSERT_TRUE(mib.ok());
  EXPECT_EQ(*mib->series[0].points[0].used_bytes, 2u * 1048576u);
  auto unknown = ParseQueryResponse(body, "some_gauge * 2", ValueUnit::kAuto);
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("--unit"));
  auto forced = ParseQueryResponse(body, "some_gauge * 2", ValueUnit::kGiB);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(*forced->series[0].points[0].used_bytes, 2ull << 30);
  // Arithmetic changes the unit the name inside says: DCGM's MiB times 1048576 are bytes, and the
  // values were taken for MiB (2^20 times too large). Such a query needs --unit; a sum, a range or
  // a label value with a '-' in it does not.
  for (const char* q : {"DCGM_FI_DEV_FB_USED * 1048576", "DCGM_FI_DEV_FB_USED / 1024", "DCGM_FI_DEV_FB_USED+1"}) {
    auto arith = ParseQueryResponse(body, q, ValueUnit::kAuto);
    ASSERT_FALSE(arith.ok()) << q;
    EXPECT_THAT(arith.status().message(), HasSubstr("--unit")) << q;
  }
  for (const char* q : {"sum by (gpu) (DCGM_FI_DEV_FB_USED{Hostname=\"node-7\",job=~\"a-b.*\"})",
                        "avg_over_time(DCGM_FI_DEV_FB_USED[5m:1m])"}) {
    auto plain = ParseQueryResponse(body, q, ValueUnit::kAuto);
    ASSERT_TRUE(plain.ok()) << q << ": " << plain.status().ToString();
    EXPECT_EQ(*plain->series[0].points[0].used_bytes, 2u * 1048576u) << q;
  }
}

TEST(PrometheusReader, MalformedResponsesNameWhatWasExpected) {
  struct Case {
    const char* body;
    const char* expect;
  } cases[] = {
      {"not json", "not a JSON object"},
      {R"({"status":"error","error":"parse error at char 3"})", "parse error at char 3"},
      {R"({"status":"success","data":{"resultType":"scalar","result":[1,"2"]}})", "expected a matrix"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1]]}]}})",
       "expected [time, \"value\"]"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"x1"]]}]}})",
       "is not a number"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1.7e20,"1"]]}]}})",
       "time 1.7e+20 is not epoch seconds before the year 10000"},
      // The right outline with values of other types inside.
      {R"({"status":5})", "unexpected JSON"},
      {R"({"status":"success","data":{"resultType":7,"result":[]}})", "unexpected JSON"},
      {R"({"status":"success","data":{"resultType":"matrix","result":[7]}})", "unexpected JSON"},
  };
  for (const auto& c : cases) {
    auto r = ParseQueryResponse(c.body, "x_bytes", ValueUnit::kAuto);
    ASSERT_FALSE(r.ok()) << c.body;
    EXPECT_THAT(r.status().message(), HasSubstr(c.expect)) << c.body;
  }
}

TEST(PrometheusReader, CompanionQueriesFindTheCardSize) {
  EXPECT_EQ(CompanionTotalQuery("DCGM_FI_DEV_FB_USED{Hostname=\"n1\"}"),
            "DCGM_FI_DEV_FB_USED{Hostname=\"n1\"} + DCGM_FI_DEV_FB_FREE{Hostname=\"n1\"}");
  EXPECT_EQ(CompanionTotalQuery("vramwatch_gpu_memory_used_bytes"), "vramwatch_gpu_memory_total_bytes");
  EXPECT_EQ(CompanionTotalQuery("rate(x[5m])"), "");
}

TEST(PrometheusReader, UnreachableServerIsUnavailableNamingTheUrl) {
  // A port nobody listens on: bind one, close it.
  const int port = vw::test_support::FreeLoopbackPort();
  ASSERT_GT(port, 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto r = FetchPrometheusSeries(url, "up", 3600, 1700000000, ValueUnit::kBytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr(url));
  // The whole reason, not httplib's one-word error name.
  EXPECT_THAT(r.status().message(), HasSubstr("cannot connect (connection refused"));
  EXPECT_FALSE(FetchPrometheusSeries("prometheus:9090", "up", 3600, 1, ValueUnit::kBytes).ok());
}

TEST(PrometheusReader, AMigGpuInstanceIsAGpuOfItsOwn) {
  auto gi = IdentityFromLabels({{"gpu", "0"},
                                {"UUID", "GPU-abc"},
                                {"Hostname", "node-1"},
                                {"modelName", "NVIDIA H100 80GB HBM3"},
                                {"GPU_I_ID", "2"},
                                {"GPU_I_PROFILE", "3g.40gb"}});
  EXPECT_EQ(gi.key, "node-1/0/gi2");
  EXPECT_EQ(gi.index, 0);
  EXPECT_EQ(gi.name, "NVIDIA H100 80GB HBM3 MIG 3g.40gb");
  // Two instances of one card are two series, each with its own values.
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"0","Hostname":"n","GPU_I_ID":"1"},"values":[[1,"30000"]]},
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"0","Hostname":"n","GPU_I_ID":"2"},"values":[[1,"9000"]]}]}})";
  auto r = ParseQueryResponse(body, "DCGM_FI_DEV_FB_USED", ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto merged = MergeSeriesOfOneGpu(std::move(r->series), 300);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].gpu.key, "n/0/gi1");
  EXPECT_EQ(merged[1].gpu.key, "n/0/gi2");
  EXPECT_EQ(merged[0].gpu.name, "MIG GPU instance 1");
  // vramwatch's own MIG metric names them the same way, and has its size beside it.
  auto own = IdentityFromLabels(
      {{"gpu", "0"}, {"hostname", "n"}, {"model_name", "H100"}, {"gpu_instance_id", "9"}, {"mig_profile", "1g.10gb"}});
  EXPECT_EQ(own.key, "n/0/gi9");
  EXPECT_EQ(own.name, "H100 MIG 1g.10gb");
  EXPECT_EQ(CompanionTotalQuery("vramwatch_mig_instance_memory_used_bytes{gpu=\"0\"}"),
            "vramwatch_mig_instance_memory_total_bytes{gpu=\"0\"}");
}

// dcgm-exporter gives a GPU's series a `pod` label while a pod uses it: a new series each time a
// pod starts. They are one GPU's memory, read as one series; a card replaced at the same index
// (another UUID) is another GPU.
TEST(PrometheusReader, SeriesOfOneGpuWhoseLabelsChangedAreOneAndAReplacedCardIsAnother) {
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"3","UUID":"GPU-a","Hostname":"n","pod":"train-1"},
     "values":[[100,"10"],[115,"11"],[130,"12"]]},
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"3","UUID":"GPU-a","Hostname":"n","pod":"train-2"},
     "values":[[130,"20"],[145,"21"]]},
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"4","UUID":"GPU-old","Hostname":"n"},"values":[[100,"5"]]},
    {"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"4","UUID":"GPU-new","Hostname":"n"},"values":[[145,"6"]]}]}})";
  auto r = ParseQueryResponse(body, "DCGM_FI_DEV_FB_USED", ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->series.size(), 4u) << "as Prometheus gave them";
  auto merged = MergeSeriesOfOneGpu(std::move(r->series), 300);
  ASSERT_EQ(merged.size(), 3u);
  const PrometheusSeries& gpu3 = merged[0];
  EXPECT_EQ(gpu3.gpu.key, "n/3");
  EXPECT_EQ(gpu3.merged, 2u);
  EXPECT_EQ(gpu3.changed_labels, std::vector<std::string>{"pod"});
  EXPECT_EQ(gpu3.labels.at("pod"), "train-2") << "the labels of the series that reaches furthest";
  ASSERT_EQ(gpu3.points.size(), 4u) << "one point per time";
  const double want_t[] = {100, 115, 130, 145};
  const uint64_t want_mib[] = {10, 11, 20, 21};  // at 130 s, the newer series' value
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_DOUBLE_EQ(gpu3.points[k].t, want_t[k]);
    EXPECT_EQ(*gpu3.points[k].used_bytes, want_mib[k] << 20) << k;
  }
  EXPECT_EQ(merged[1].gpu.key, "n/4/GPU-old");
  EXPECT_EQ(merged[2].gpu.key, "n/4/GPU-new");
  EXPECT_EQ(merged[1].merged, 1u);
}

TEST(PrometheusReader, MetricsThatAreNotUsedMemoryAreRefused) {
  for (const char* name : {"DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED", "DCGM_FI_DEV_FB_USED_PERCENT",
                           "vramwatch_gpu_memory_total_bytes", "nvidia_smi_memory_free_bytes"}) {
    EXPECT_THAT(NotUsedMemoryReason(name), HasSubstr("not the used memory")) << name;
    const std::string body = std::string(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"__name__":")") +
                             name + R"(","gpu":"0"},"values":[[1,"2"]]}]}})";
    auto r = ParseQueryResponse(body, std::string("max by (gpu, __name__) (") + name + ")", ValueUnit::kAuto);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_THAT(r.status().message(), HasSubstr(name));
  }
  EXPECT_EQ(NotUsedMemoryReason("DCGM_FI_DEV_FB_USED"), "");
  EXPECT_EQ(NotUsedMemoryReason("vramwatch_gpu_memory_used_bytes"), "");
  // Refused before any request (no server at this address).
  auto r =
      FetchPrometheusSeries("http://127.0.0.1:1", "DCGM_FI_DEV_FB_FREE{gpu=\"6\"}", 3600, 1700000000, ValueUnit::kAuto);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("query DCGM_FI_DEV_FB_USED"));
}

TEST(PrometheusReader, ValuesNoGpuMemoryCanBeAreMissingAndCountedAndWarningsAreKept) {
  const std::string body = R"({"status":"success","warnings":["3 of 5 store nodes down"],
    "data":{"resultType":"matrix","result":[
    {"metric":{"__name__":"x_bytes","gpu":"0"},"values":[[1,"1e300"],[2,"1024"],[3,"2e15"],[4,"+Inf"]]}]}})";
  auto r = ParseQueryResponse(body, "x_bytes", ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->warnings, std::vector<std::string>{"3 of 5 store nodes down"});
  const PrometheusSeries& s = r->series[0];
  ASSERT_EQ(s.points.size(), 4u);
  EXPECT_FALSE(s.points[0].used_bytes.has_value()) << "1e300 bytes is no GPU's memory";
  EXPECT_EQ(*s.points[1].used_bytes, 1024u);
  EXPECT_FALSE(s.points[2].used_bytes.has_value()) << "2 PB neither";
  EXPECT_FALSE(s.points[3].used_bytes.has_value());
  EXPECT_EQ(s.implausible, 2u) << "Inf is not counted as implausible: it is no value";
  EXPECT_EQ(s.first_implausible, "1e300");
}

// A step of half the scrape interval reads each sample twice: a value no GPU memory can be is
// counted once per sample, as the samples are kept.
TEST(PrometheusReader, ValuesNoGpuMemoryCanBeAreCountedOncePerSample) {
  // Samples every 30 s, read every 15 s; the samples at 0 and 60 s are 1e300.
  std::string values;
  MatrixPoints times;
  for (int step = 0; step <= 10; ++step) {
    const int at = 15 * step, sample_at = at - at % 30;  // seconds after 1700000000
    values += std::string(step ? "," : "") + "[" + std::to_string(1700000000 + at) + ",\"" +
              (sample_at == 0 || sample_at == 60 ? "1e300" : "1024") + "\"]";
    times[LabelsWithoutName({{"gpu", "0"}})].emplace_back(1700000000 + at, 1700000000 + sample_at);
  }
  const std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[)"
                           R"({"metric":{"__name__":"x_bytes","gpu":"0"},"values":[)" +
                           values + "]}]}}";
  auto r = ParseQueryResponse(body, "x_bytes", ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  PrometheusSeries& s = r->series[0];
  ASSERT_EQ(s.implausible, 4u) << "as read: each of the two samples at two steps";
  ASSERT_TRUE(KeepEachSampleOnce(s, times));
  ASSERT_EQ(s.points.size(), 6u);
  EXPECT_EQ(s.implausible, 2u) << "each sample once";
  EXPECT_EQ(s.first_implausible, "1e300");
  EXPECT_FALSE(s.points[0].used_bytes.has_value());
  EXPECT_FALSE(s.points[2].used_bytes.has_value());
}

// `server` on a free loopback port (port() > 0 when bound), served on its own thread until Stop()
// or the end of the scope.
class LoopbackServer {
 public:
  explicit LoopbackServer(httplib::Server& server) : server_(server), port_(server.bind_to_any_port("127.0.0.1")) {
    if (port_ > 0) thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~LoopbackServer() { Stop(); }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;
  int port() const { return port_; }
  void Stop() {
    if (!thread_.joinable()) return;
    server_.stop();
    thread_.join();
  }

 private:
  httplib::Server& server_;
  int port_;
  std::thread thread_;
};

TEST(PrometheusReader, CredentialsInTheUrlAreBasicAuthAndNeverShown) {
  EXPECT_EQ(UrlForMessages("http://alice:secret@prom:9090/x"), "http://alice:***@prom:9090/x");
  EXPECT_EQ(UrlForMessages("https://prom:9090"), "https://prom:9090");
  httplib::Server server;
  std::string seen_auth;
  server.Post("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
    seen_auth = req.get_header_value("Authorization");
    if (seen_auth != "Basic YWxpY2U6c2VjcmV0" && seen_auth != "Basic YWxpY2U6cEBzczp4") {  // alice:secret, alice:p@ss:x
      res.status = 401;
      res.set_content("Unauthorized", "text/plain");
      return;
    }
    res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"gpu":"0"},"values":[[1700000000,"5"]]}]}})",
                    "application/json");
  });
  LoopbackServer running(server);
  const int port = running.port();
  ASSERT_GT(port, 0);
  FetchOptions o;
  o.step_s = 60;
  const std::string base = "127.0.0.1:" + std::to_string(port);
  auto ok = FetchPrometheusSeries("http://alice:secret@" + base, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, o);
  auto wrong = FetchPrometheusSeries("http://alice:guess@" + base, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, o);
  auto encoded =
      FetchPrometheusSeries("HTTP://alice:p%40ss%3Ax@" + base, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, o);
  FetchOptions from_file = o;  // --basic-auth-file
  from_file.basic_user = "alice";
  from_file.basic_password = "secret";
  auto filed = FetchPrometheusSeries("http://" + base, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, from_file);
  FetchOptions both = o;
  both.bearer_token = "t0ken";
  auto two = FetchPrometheusSeries("http://alice:secret@" + base, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, both);
  running.Stop();
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->series.size(), 1u);
  EXPECT_TRUE(encoded.ok()) << "a percent-encoded '@' and ':' in the password, an upper-case scheme: "
                            << encoded.status().ToString();
  EXPECT_TRUE(filed.ok()) << "basic auth from a file: " << filed.status().ToString();
  ASSERT_FALSE(two.ok()) << "a password and a token: which one is meant?";
  EXPECT_THAT(two.status().message(), HasSubstr("give one of them"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("HTTP 401"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("unauthorized"));
  EXPECT_THAT(wrong.status().message(), HasSubstr("alice:***@"));
  EXPECT_THAT(wrong.status().message(), ::testing::Not(HasSubstr("guess")));
}

// A proxy in front of Prometheus may refuse credentials in Prometheus' JSON: its words are kept,
// and so is how to give credentials.
TEST(PrometheusReader, ARefusalOfCredentialsInJsonStillSaysHowToGiveThem) {
  httplib::Server server;
  server.Post("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
    const bool forbidden = req.get_param_value("query") == "forbidden_bytes";
    res.status = forbidden ? 403 : 401;
    res.set_content(forbidden ? R"({"status":"error","error":"no access to tenant a"})"
                              : R"({"status":"error","error":"unauthorized"})",
                    "application/json");
  });
  LoopbackServer running(server);
  const int port = running.port();
  ASSERT_GT(port, 0);
  FetchOptions o;
  o.step_s = 60;
  const std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto unauthorized = FetchPrometheusSeries(url, "x_bytes", 3600, 1700000000, ValueUnit::kAuto, o);
  auto forbidden = FetchPrometheusSeries(url, "forbidden_bytes", 3600, 1700000000, ValueUnit::kAuto, o);
  running.Stop();
  ASSERT_FALSE(unauthorized.ok());
  EXPECT_THAT(unauthorized.status().message(), HasSubstr("HTTP 401"));
  EXPECT_THAT(unauthorized.status().message(), HasSubstr(": unauthorized ("));
  EXPECT_THAT(unauthorized.status().message(), HasSubstr("--basic-auth-file"));
  EXPECT_THAT(unauthorized.status().message(), HasSubstr("--bearer-token-file"));
  ASSERT_FALSE(forbidden.ok());
  EXPECT_THAT(forbidden.status().message(), HasSubstr("HTTP 403"));
  EXPECT_THAT(forbidden.status().message(), HasSubstr("no access to tenant a"));
  EXPECT_THAT(forbidden.status().message(), HasSubstr("these credentials may not read it"));
}

// A listening TCP socket on a free loopback port (its address in *addr), or -1.
int LoopbackListener(sockaddr_in* addr, int backlog) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  addr->sin_family = AF_INET;
  addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof *addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(addr), sizeof *addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(addr), &len) != 0 || listen(fd, backlog) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// x_bytes over an hour from a raw loopback server: `serve(listener, done)` runs on its own thread
// until `done`, which is set once the fetch returns; *took is the seconds the fetch took.
Result<PrometheusFetch> FetchFromRawServer(int backlog, bool nonblocking,
                                           const std::function<void(int, const std::atomic<bool>&)>& serve,
                                           const FetchOptions& o, double* took) {
  sockaddr_in addr{};
  const int listener = LoopbackListener(&addr, backlog);
  if (listener < 0 || (nonblocking && fcntl(listener, F_SETFL, O_NONBLOCK) != 0)) {
    return Status::Internal("no loopback listener");
  }
  std::atomic<bool> done{false};
  std::thread server([&] { serve(listener, done); });
  const auto started = std::chrono::steady_clock::now();
  auto r = FetchPrometheusSeries("http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), "x_bytes", 3600,
                                 1700000000, ValueUnit::kAuto, o);
  *took = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  done = true;
  server.join();
  close(listener);
  return r;
}

// A server that answers a byte now and then never passes httplib's read timeout: the request's
// own deadline ends it.
TEST(PrometheusReader, AnAnswerNotCompleteWithinTheTimeoutIsUnavailable) {
  auto drip = [](int listener, const std::atomic<bool>& done) {
    const int c = accept(listener, nullptr, nullptr);
    if (c < 0) return;
    const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n";
    (void)!write(c, head, sizeof head - 1);
    for (int i = 0; i < 100 && !done; ++i) {
      if (write(c, "{", 1) != 1) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    close(c);
  };
  FetchOptions o;
  o.step_s = 60;
  o.timeout_s = 1;
  double took = 0;
  auto r = FetchFromRawServer(1, false, drip, o, &took);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(r.status().message(), HasSubstr("no complete answer"));
  EXPECT_LT(took, 10) << "the drip would have gone on for 20 s";
}

// A server that takes connections and never answers: the first request that gets no answer (the
// scrape interval's, for a plain selector) ends the fetch, after one timeout, not one per request.
TEST(PrometheusReader, AServerThatNeverAnswersIsReportedAfterOneTimeout) {
  auto silent = [](int listener, const std::atomic<bool>& done) {  // accepts, reads nothing, writes nothing
    std::vector<int> held;
    while (!done) {
      const int c = accept(listener, nullptr, nullptr);
      if (c >= 0) held.push_back(c);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (int c : held) close(c);
  };
  FetchOptions o;
  o.timeout_s = 1;
  double took = 0;
  auto r = FetchFromRawServer(8, true, silent, o, &took);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  // The fetch's own deadline and the client's read timeout are both --timeout: under load either
  // may end the wait first, and both messages say so.
  EXPECT_THAT(r.status().message(),
              AnyOf(HasSubstr("no complete answer to /api/v1/query"), HasSubstr("no answer came within 1 s")));
  EXPECT_THAT(r.status().message(), HasSubstr("within 1 s"));
  EXPECT_LT(took, 3.5) << "one --timeout, not one per request (four requests would take 4 s)";
}

// Two series of one GPU holding different values over the same hours are not one memory read
// twice: each is judged on its own, told apart by the labels that differ.
// A matrix answer of DCGM_FI_DEV_FB_USED on GPU 0 of host "ov": one series per entry, its `pod`
// label and its points (seconds, MiB).
std::string OvAnswer(const std::vector<std::pair<std::string, std::vector<std::pair<int, int>>>>& series) {
  std::string body = R"({"status":"success","data":{"resultType":"matrix","result":[)";
  for (size_t i = 0; i < series.size(); ++i) {
    body += std::string(i ? "," : "") + R"({"metric":{"__name__":"DCGM_FI_DEV_FB_USED","gpu":"0","Hostname":"ov")";
    if (!series[i].first.empty()) body += R"(,"pod":")" + series[i].first + "\"";
    body += R"(},"values":[)";
    for (size_t k = 0; k < series[i].second.size(); ++k) {
      body += (k ? "," : "") + std::string("[") + std::to_string(series[i].second[k].first) + ",\"" +
              std::to_string(series[i].second[k].second) + "\"]";
    }
    body += "]}";
  }
  return body + "]}}";
}

// Points every minute over [from, to) seconds at `mib`, rising by `per_min` each minute.
std::vector<std::pair<int, int>> Minutes(int from, int to, int mib, int per_min = 0) {
  std::vector<std::pair<int, int>> out;
  for (int t = from; t < to; t += 60) out.emplace_back(t, mib + per_min * (t - from) / 60);
  return out;
}

// Two series of one GPU holding different values over the same hours are not one memory read
// twice: each is judged on its own, told apart by the labels that differ. Series that take turns
// (idle, a pod, idle again: dcgm-exporter labels the pod's) are one.
TEST(PrometheusReader, SeriesOfOneGpuThatOverlapForLongStayApartAndOnesTakingTurnsAreOne) {
  auto r = ParseQueryResponse(OvAnswer({{"p1", Minutes(0, 7200, 20000)}, {"p2", Minutes(3600, 7200, 100, 7)}}),
                              "DCGM_FI_DEV_FB_USED", ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto apart = MergeSeriesOfOneGpu(std::move(r->series), 300);
  ASSERT_EQ(apart.size(), 2u);
  EXPECT_EQ(apart[0].gpu.key, "ov/0/pod=p1");
  EXPECT_EQ(apart[1].gpu.key, "ov/0/pod=p2");
  EXPECT_EQ(apart[0].apart, 2u);
  EXPECT_EQ(apart[1].points.size(), 60u);
  EXPECT_EQ(*apart[1].points.back().used_bytes, (100ull + 7 * 59) << 20);
  // Idle (no pod label) for an hour, a pod for an hour, idle again; each ends with Prometheus'
  // five minutes of look-back over the next.
  std::vector<std::pair<int, int>> idle = Minutes(0, 3600 + 300, 500);
  for (auto p : Minutes(7200, 10800, 500)) idle.push_back(p);
  r = ParseQueryResponse(OvAnswer({{"", idle}, {"train-0", Minutes(3600, 7200 + 300, 30000)}}), "DCGM_FI_DEV_FB_USED",
                         ValueUnit::kAuto);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto turns = MergeSeriesOfOneGpu(std::move(r->series), 300);
  ASSERT_EQ(turns.size(), 1u) << turns[0].gpu.key;
  EXPECT_EQ(turns[0].gpu.key, "ov/0");
  EXPECT_EQ(turns[0].merged, 2u);
  EXPECT_EQ(turns[0].points.size(), 180u) << "one point per minute over the three hours";
}

TEST(PrometheusReader, AQueryOfFreeMemoryInsideAFunctionIsRefusedAndARatioIsNot) {
  EXPECT_THAT(NotUsedQueryReason("max_over_time(DCGM_FI_DEV_FB_FREE{gpu=\"0\"}[5m])"),
              HasSubstr("DCGM_FI_DEV_FB_FREE is the free memory"));
  EXPECT_EQ(NotUsedQueryReason("DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)"), "");
  EXPECT_EQ(NotUsedQueryReason("sum by (gpu) (vramwatch_gpu_memory_used_bytes)"), "");
  EXPECT_EQ(NotUsedQueryReason("some_gauge"), "");
  // Arithmetic may make used memory of them; a label value is no metric.
  EXPECT_EQ(NotUsedQueryReason("DCGM_FI_DEV_FB_TOTAL - DCGM_FI_DEV_FB_FREE"), "");
  EXPECT_THAT(NotUsedQueryReason("max_over_time(DCGM_FI_DEV_FB_FREE{pod=\"used-x\"}[5m])"),
              HasSubstr("DCGM_FI_DEV_FB_FREE is the free memory"));
}

TEST(PrometheusReader, AMalformedUrlNeverShowsItsPassword) {
  for (const char* url : {"ftp://alice:s3cret@h", "http:/alice:s3cret@h", "http://alice:pa/ss3cret@h:1",
                          "http://alice:s3cret@", "http://alice:s3cr%4@h"}) {
    auto r = FetchPrometheusSeries(url, "x_bytes", 3600, 1700000000, ValueUnit::kAuto);
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << url << ": " << r.status().ToString();
    EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr("s3cr"))) << url;
  }
  auto slash = FetchPrometheusSeries("http://alice:pa/ss@h:1", "x_bytes", 3600, 1700000000, ValueUnit::kAuto);
  ASSERT_FALSE(slash.ok());
  EXPECT_THAT(slash.status().message(), HasSubstr("%2F"));
  EXPECT_EQ(UrlForMessages("HTTP://alice:s3cret@h"), "HTTP://alice:***@h");
  // A '@' in the path is no user's.
  EXPECT_EQ(UrlForMessages("http://prom:9090/a@b"), "http://prom:9090/a@b");
  EXPECT_EQ(UrlForMessages("http://[::1]:9090/x@y"), "http://[::1]:9090/x@y");
  EXPECT_EQ(UrlForMessages("http://alice:s3cret@[::1]:9090/x"), "http://alice:***@[::1]:9090/x");
}

// A server whose answers to timestamp(Q) name other series than Q's (a proxy that rewrites
// labels): the samples cannot be told apart, and the fetch says so (each_sample_once false), so
// that analyze notes it. The bearer token is sent.
TEST(PrometheusReader, SampleTimesThatMatchNoSeriesAreSaidAndTheTokenIsSent) {
  httplib::Server server;
  std::string seen_auth;
  server.Post("/api/v1/query", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"success","data":{"resultType":"matrix","result":[
      {"metric":{"gpu":"0"},"values":[[1699999940,"5"],[1699999955,"5"],[1699999970,"5"],[1699999985,"5"]]}]}})",
                    "application/json");
  });
  server.Post("/api/v1/query_range", [&](const httplib::Request& req, httplib::Response& res) {
    seen_auth = req.get_header_value("Authorization");
    const bool times = req.get_param_value("query").rfind("timestamp(", 0) == 0;
    res.set_content(std::string(R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"gpu":")") +
                        (times ? "9" : "0") + R"("},"values":[[1700000000,"5"],[1700000008,"5"]]}]}})",
                    "application/json");
  });
  LoopbackServer running(server);
  const int port = running.port();
  ASSERT_GT(port, 0);
  FetchOptions o;
  o.bearer_token = "t0ken";
  auto r =
      FetchPrometheusSeries("http://127.0.0.1:" + std::to_string(port), "x_bytes", 60, 1700000008, ValueUnit::kAuto, o);
  running.Stop();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->step_s, 7.5) << "half the spacing the first query read";
  EXPECT_FALSE(r->each_sample_once);
  EXPECT_EQ(r->series[0].points.size(), 2u) << "kept as read";
  EXPECT_EQ(seen_auth, "Bearer t0ken");
}

// A real Prometheus (Debian's package) on a free loopback port, loaded with 12 h of generated
// history through `promtool tsdb create-blocks-from openmetrics`. Stopped in the destructor, so
// also when an assertion fails.
class RealPrometheus {
 public:
  RealPrometheus() {
    char tmpl[] = "/tmp/vw_prom_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~RealPrometheus() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 100; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = 0;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    fs::remove_all(dir_);
  }
  const std::string& dir() const { return dir_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::string Log() const {
    std::ifstream in(dir_ + "/prometheus.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  // Loads OpenMetrics text into blocks in the storage dir.
  ::testing::AssertionResult Load(const std::string& openmetrics) {
    if (std::system("command -v promtool >/dev/null && command -v prometheus >/dev/null") != 0) {
      return ::testing::AssertionFailure() << "prometheus/promtool not on PATH: install Debian's prometheus "
                                              "package (scripts/bootstrap does)";
    }
    std::ofstream(dir_ + "/history.om") << openmetrics;
    fs::create_directories(dir_ + "/data");
    std::string cmd = "promtool tsdb create-blocks-from openmetrics " + dir_ + "/history.om " + dir_ + "/data > " +
                      dir_ + "/promtool.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream in(dir_ + "/promtool.log");
      return ::testing::AssertionFailure()
             << "promtool failed: " << std::string(std::istreambuf_iterator<char>(in), {});
    }
    return ::testing::AssertionSuccess();
  }

  ::testing::AssertionResult Start() {
    std::ofstream(dir_ + "/prometheus.yml") << "global:\n  scrape_interval: 15s\n";
    port_ = vw::test_support::FreeLoopbackPort();
    if (port_ == 0) return ::testing::AssertionFailure() << "no free loopback port for prometheus";
    pid_ = fork();
    if (pid_ == 0) {
      int log = open((dir_ + "/prometheus.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(log, 1);
      dup2(log, 2);
      std::string cfg = "--config.file=" + dir_ + "/prometheus.yml";
      std::string data = "--storage.tsdb.path=" + dir_ + "/data";
      std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
      execlp("prometheus", "prometheus", cfg.c_str(), data.c_str(), listen.c_str(), "--storage.tsdb.retention.time=30d",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(1);
    for (int i = 0; i < 600; ++i) {
      auto r = c.Get("/-/ready");
      if (r && r->status == 200) return ::testing::AssertionSuccess();
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        return ::testing::AssertionFailure() << "prometheus exited: " << Log();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return ::testing::AssertionFailure() << "prometheus not ready after 60 s: " << Log();
  }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = 0;
};

TEST(PrometheusReader, ReadsGeneratedHistoryBackFromARealPrometheus) {
  RealPrometheus prom;
  // 12 h at 15 s ending on a whole minute a few minutes ago: GPU 0 leaks 1 MiB per sample, GPU 1 is
  // flat at 30000 MiB; cards have 81559 MiB (free = total - used).
  const long end = (static_cast<long>(std::time(nullptr)) / 60) * 60 - 300;
  const long start = end - 12 * 3600;
  std::string om;
  for (const char* name : {"vramwatch_gpu_memory_used_bytes", "vramwatch_gpu_memory_total_bytes"}) {
    om += std::string("# TYPE ") + name + " gauge\n";
    for (long t = start; t <= end; t += 60) {
      const long long value = std::string(name) == "vramwatch_gpu_memory_total_bytes" ? 85520809984LL : 21474836480LL;
      om += std::string(name) + R"({gpu="0",uuid="GPU-0",hostname="node-1"} )" + std::to_string(value) + " " +
            std::to_string(t) + "\n";
    }
  }
  for (const char* name : {"DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE"}) {
    om += std::string("# TYPE ") + name + " gauge\n";
    for (int gpu = 0; gpu < 2; ++gpu) {
      for (long t = start, k = 0; t <= end; t += 15, ++k) {
        const long used = gpu == 0 ? 20000 + k : 30000;
        const long value = std::string(name) == "DCGM_FI_DEV_FB_USED" ? used : 81559 - used;
        om += std::string(name) + "{gpu=\"" + std::to_string(gpu) + "\",UUID=\"GPU-" + std::to_string(gpu) +
              "\",Hostname=\"node-1\",modelName=\"NVIDIA H100 80GB HBM3\"} " + std::to_string(value) + " " +
              std::to_string(t) + "\n";
      }
    }
  }
  om += "# EOF\n";
  ASSERT_TRUE(prom.Load(om));
  ASSERT_TRUE(prom.Start());

  FetchOptions o;
  o.step_s = 15;
  auto series = FetchPrometheusSeries(prom.url(), "DCGM_FI_DEV_FB_USED", 12 * 3600, static_cast<double>(end),
                                      ValueUnit::kAuto, o);
  ASSERT_TRUE(series.ok()) << series.status().ToString() << "\n" << prom.Log();
  ASSERT_EQ(series->series.size(), 2u);
  for (const auto& s : series->series) {
    ASSERT_TRUE(s.gpu.index.has_value());
    ASSERT_EQ(s.points.size(), 2881u) << "gpu " << *s.gpu.index;
    EXPECT_EQ(s.gpu.key, "node-1/" + std::to_string(*s.gpu.index));
    EXPECT_EQ(s.gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_DOUBLE_EQ(s.points.front().t, static_cast<double>(start));
    EXPECT_DOUBLE_EQ(s.points.back().t, static_cast<double>(end));
    ASSERT_TRUE(s.total_bytes.has_value());
    EXPECT_EQ(*s.total_bytes, 81559ull * 1048576ull);
    for (size_t k = 0; k < s.points.size(); k += 97) {
      const uint64_t want_mib = *s.gpu.index == 0 ? 20000 + k : 30000;
      ASSERT_EQ(*s.points[k].used_bytes, want_mib * 1048576ull) << "gpu " << *s.gpu.index << " k " << k;
    }
  }

  // A range that ends 20 minutes after the data: the card size is read at the series' own last
  // samples (at --end, past Prometheus' 5-minute look-back, there is none).
  auto after = FetchPrometheusSeries(prom.url(), "DCGM_FI_DEV_FB_USED", 6 * 3600, static_cast<double>(end + 1200),
                                     ValueUnit::kAuto, o);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  ASSERT_EQ(after->series.size(), 2u);
  for (const auto& s : after->series) {
    EXPECT_EQ(s.total_bytes, std::optional<uint64_t>(81559ull * 1048576ull)) << "gpu " << *s.gpu.index;
  }
  EXPECT_DOUBLE_EQ(after->end_t, static_cast<double>(end + 1200));

  // Without a step, a plain selector is read at its own spacing (15 s), each sample once, where the
  // smallest step under the 11000-point limit (4 s for 12 h) read each sample three or four times.
  auto own = FetchPrometheusSeries(prom.url(), "DCGM_FI_DEV_FB_USED{gpu=\"0\"}", 12 * 3600, static_cast<double>(end),
                                   ValueUnit::kAuto);
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_TRUE(own->each_sample_once);
  EXPECT_DOUBLE_EQ(own->step_s, 7.5) << "half the scrape interval";
  ASSERT_EQ(own->series.size(), 1u);
  ASSERT_EQ(own->series[0].points.size(), 2881u);
  for (size_t k = 0; k < own->series[0].points.size(); ++k) {
    ASSERT_DOUBLE_EQ(own->series[0].points[k].t, static_cast<double>(start + 15 * static_cast<long>(k))) << k;
    ASSERT_EQ(*own->series[0].points[k].used_bytes, (20000 + k) * 1048576ull) << k;
  }
  // vramwatch's own metric: its card size from vramwatch_gpu_memory_total_bytes (which the check
  // against metrics of another kind must not refuse), each sample once (one a minute).
  auto ours = FetchPrometheusSeries(prom.url(), "vramwatch_gpu_memory_used_bytes", 12 * 3600, static_cast<double>(end),
                                    ValueUnit::kAuto);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  ASSERT_EQ(ours->series.size(), 1u);
  EXPECT_EQ(ours->series[0].total_bytes, std::optional<uint64_t>(85520809984ULL));
  EXPECT_EQ(ours->series[0].points.size(), 721u);
  // Another query (no spacing to read): the smallest step under the limit, values holding.
  auto dense = FetchPrometheusSeries(prom.url(), "max by (gpu) (DCGM_FI_DEV_FB_USED{gpu=\"1\"})", 12 * 3600,
                                     static_cast<double>(end), ValueUnit::kAuto);
  ASSERT_TRUE(dense.ok()) << dense.status().ToString();
  EXPECT_DOUBLE_EQ(dense->step_s, 4);
  ASSERT_EQ(dense->series.size(), 1u);
  EXPECT_EQ(dense->series[0].points.size(), 10801u);
  for (const auto& r : dense->series[0].points) ASSERT_EQ(*r.used_bytes, 30000ull * 1048576ull);

  // Prometheus' own complaint comes back as an invalid argument.
  auto bad = FetchPrometheusSeries(prom.url(), "DCGM_FI_DEV_FB_USED{", 3600, static_cast<double>(end), ValueUnit::kMiB);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("rejected the query"));
}

}  // namespace
}  // namespace vw::prometheus
