#include "sources/procfs/kube_names.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace vw::procfs {
namespace {

namespace fs = std::filesystem;

const std::string kUid = "6b8e2a1c-4d5f-4e3a-9b7c-0d1e2f3a4b5c";
const std::string kStaticUid = "e3b0c44298fc1c149afbf4c8996fb924";  // a static pod: the hash of its manifest
const std::string kId = "3f2a9c1b5d7e4a6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7";

TEST(ParsePodLogDir, SplitsNamespacePodAndUid) {
  KubePod p;
  std::string uid;
  ASSERT_TRUE(ParsePodLogDir("ml_llm-serve-0_" + kUid, p, uid));
  EXPECT_EQ(p.pod_namespace, "ml");
  EXPECT_EQ(p.pod_name, "llm-serve-0");
  EXPECT_EQ(uid, kUid);
  ASSERT_TRUE(ParsePodLogDir("kube-system_kube-apiserver-node1_" + kStaticUid, p, uid));
  EXPECT_EQ(p.pod_name, "kube-apiserver-node1");
  EXPECT_EQ(uid, kStaticUid);
}

TEST(ParsePodLogDir, RefusesOtherShapesAndLeavesTheOutputsAlone) {
  const std::string bad[] = {
      "ml_llm-serve-0",                                       // no UID
      "ml_llm_serve_" + kUid,                                 // four parts
      "_llm-serve-0_" + kUid,                                 // empty namespace
      "ml_llm-serve-0_not-a-uid",                             // UID of another shape
      "ml_llm-serve-0_" + kUid.substr(0, 35),                 // one digit short
      "ml_llm-serve-0_6B8E2A1C-4D5F-4E3A-9B7C-0D1E2F3A4B5C",  // the kubelet writes lower case
      "kube-system_etcd_" + kStaticUid + "0",                 // 33 hex digits
      // Names Kubernetes does not allow: they would go into a suggested kubectl command.
      "ml_pod$(reboot)_" + kUid,
      "ml`id`_llm-serve-0_" + kUid,
      "ml_Llm-serve-0_" + kUid,
      "ml_llm-serve-0-_" + kUid,
  };
  for (const std::string& entry : bad) {
    KubePod p{"keep", "keep"};
    std::string uid = "keep";
    EXPECT_FALSE(ParsePodLogDir(entry, p, uid)) << entry;
    EXPECT_EQ(p.pod_name, "keep") << entry;
    EXPECT_EQ(uid, "keep") << entry;
  }
}

TEST(ParseContainerLogLink, SplitsPodNamespaceContainerAndId) {
  KubeContainer c;
  std::string id;
  ASSERT_TRUE(ParseContainerLogLink("llm-serve-0_ml_vllm-worker-" + kId + ".log", c, id));
  EXPECT_EQ(c.pod_name, "llm-serve-0");
  EXPECT_EQ(c.pod_namespace, "ml");
  EXPECT_EQ(c.container_name, "vllm-worker") << "a dash inside the container's name stays in it";
  EXPECT_EQ(id, kId);
}

TEST(ParseContainerLogLink, RefusesOtherShapes) {
  const std::string bad[] = {
      "llm-serve-0_ml_vllm-" + kId,                     // no .log
      "llm-serve-0_ml_vllm-" + kId.substr(1) + ".log",  // 63 hex digits
      "llm-serve-0_ml_vllm_" + kId + ".log",            // '_' before the ID
      "llm-serve-0_vllm-" + kId + ".log",               // no namespace
      "llm-serve-0_ml_-" + kId + ".log",                // empty container name
      "-" + kId + ".log",
      "kern.log",
      // Names Kubernetes does not allow: they would go into a suggested kubectl command.
      "pod$(reboot)_ml_vllm-" + kId + ".log",
      "llm-serve-0_ml_ctr`id`-" + kId + ".log",
      "llm-serve-0_ml x_vllm-" + kId + ".log",
  };
  for (const std::string& entry : bad) {
    KubeContainer c;
    std::string id;
    EXPECT_FALSE(ParseContainerLogLink(entry, c, id)) << entry;
    EXPECT_TRUE(id.empty()) << entry;
  }
}

struct LogDir {
  LogDir() : root(fs::temp_directory_path() / ("vw-kube-" + std::to_string(::getpid()))) {
    fs::remove_all(root);
    fs::create_directories(root);
  }
  ~LogDir() { fs::remove_all(root); }
  void Pod(const std::string& entry) { fs::create_directories(root / "pods" / entry / "main"); }
  void Link(const std::string& entry) {
    fs::create_directories(root / "containers");
    fs::create_symlink("../pods/whatever/0.log", root / "containers" / entry);  // dangling is fine
  }
  fs::path root;
};

TEST(ReadKubeNames, ReadsBothDirectoriesAndSkipsStrangers) {
  LogDir d;
  d.Pod("ml_llm-serve-0_" + kUid);
  d.Pod("kube-system_etcd-node1_" + kStaticUid);
  d.Pod("not a pod directory");
  d.Link("llm-serve-0_ml_vllm-" + kId + ".log");
  d.Link("README");
  std::ofstream(d.root / "kern.log") << "x\n";
  DirProcFs fs(d.root.string());
  KubeNames n = ReadKubeNames(fs);
  EXPECT_EQ(n.problem, "");
  ASSERT_EQ(n.pods.size(), 2u);
  EXPECT_EQ(n.pods.at(kUid).pod_name, "llm-serve-0");
  EXPECT_EQ(n.pods.at(kStaticUid).pod_namespace, "kube-system");
  ASSERT_EQ(n.containers.size(), 1u);
  EXPECT_EQ(n.containers.at(kId).container_name, "vllm");
}

TEST(ReadKubeNames, AbsentDirectoriesAreNoProblemButUnlistableOnesAre) {
  LogDir d;  // a node without Kubernetes: /var/log holds neither
  DirProcFs fs(d.root.string());
  KubeNames none = ReadKubeNames(fs);
  EXPECT_TRUE(none.pods.empty() && none.containers.empty());
  EXPECT_EQ(none.problem, "");

  d.Pod("ml_llm-serve-0_" + kUid);
  FaultInjectingProcFs faulty(fs);
  faulty.Fail("containers", Status(StatusCode::kPermissionDenied, "permission denied"));
  KubeNames half = ReadKubeNames(faulty);
  EXPECT_EQ(half.pods.size(), 1u) << "what could be read is kept";
  EXPECT_NE(half.problem.find("containers: permission denied"), std::string::npos) << half.problem;
}

ProcessSnapshot Holder(int64_t pid, const std::string& container_id, const std::string& pod_uid) {
  ProcessSnapshot p;
  p.pid = pid;
  p.info.container_id = container_id;
  p.info.pod_uid = pod_uid;
  return p;
}

TEST(NameKubeHolders, NamesByContainerIdThenByPodUid) {
  KubeNames n;
  n.pods[kUid] = {"ml", "llm-serve-0"};
  n.pods[kStaticUid] = {"kube-system", "etcd-node1"};
  n.containers[kId] = {"ml", "llm-serve-0", "vllm"};
  HostSnapshot h;
  h.gpus.emplace_back();
  h.gpus[0].processes = {Holder(1, kId, kUid),                         // both known
                         Holder(2, kId, ""),                           // the container's link names its pod
                         Holder(3, std::string(64, 'a'), kStaticUid),  // an unlinked container of a known pod
                         Holder(4, std::string(64, 'b'), ""),          // a plain Docker container
                         Holder(5, "", "")};                           // no container at all
  NameKubeHolders(h, n);
  const auto& ps = h.gpus[0].processes;
  EXPECT_EQ(ps[0].info.pod_namespace, "ml");
  EXPECT_EQ(ps[0].info.pod_name, "llm-serve-0");
  EXPECT_EQ(ps[0].info.container_name, "vllm");
  EXPECT_EQ(ps[1].info.pod_name, "llm-serve-0");
  EXPECT_EQ(ps[1].info.container_name, "vllm");
  EXPECT_EQ(ps[2].info.pod_namespace, "kube-system");
  EXPECT_EQ(ps[2].info.pod_name, "etcd-node1");
  EXPECT_EQ(ps[2].info.container_name, "");
  for (size_t i : {3u, 4u}) {
    EXPECT_EQ(ps[i].info.pod_name, "") << i;
    EXPECT_EQ(ps[i].info.container_name, "") << i;
  }
}

// Holders in pods and a log directory that names none (not the node's, or not mounted): said,
// with what to do; not said when the directory names some pods, or when no holder is in a pod.
TEST(UnnamedPodsNote, SaysWhenPodsRunButTheDirectoryNamesNone) {
  HostSnapshot h;
  h.gpus.emplace_back();
  h.gpus[0].processes = {Holder(1, kId, kUid), Holder(2, "", kStaticUid), Holder(3, "", "")};
  const std::string note = UnnamedPodsNote(h, KubeNames{}, "/host/var/log");
  EXPECT_NE(note.find("2 holder(s) run in Kubernetes pods, but /host/var/log has no pod log directories"),
            std::string::npos)
      << note;
  KubeNames some;
  some.pods["0a1b2c3d-0000-1111-2222-333344445555"] = {"other", "pod"};
  EXPECT_EQ(UnnamedPodsNote(h, some, "/var/log"), "") << "the directory is the node's: these pods are gone";
  KubeNames unreadable;
  unreadable.problem = "/var/log/pods: permission denied";
  EXPECT_EQ(UnnamedPodsNote(h, unreadable, "/var/log"), "") << "the problem is said instead";
  HostSnapshot plain;
  plain.gpus.emplace_back();
  plain.gpus[0].processes = {Holder(3, "", "")};
  EXPECT_EQ(UnnamedPodsNote(plain, KubeNames{}, "/var/log"), "");
}

}  // namespace
}  // namespace vw::procfs
