// Fuzz target: any bytes as a PyTorch memory log (sources/trace/framework_log.h), read and judged
// layer by layer (detection/framework_split.h), or, when the first byte is odd, as the kubelet's
// log directory entry names, one per line (sources/procfs/kube_names.h). An error Result is an
// answer; a crash, a sanitizer report or a hang is a bug.
#include <cstdint>
#include <string>
#include <string_view>

#include "detection/framework_split.h"
#include "sources/procfs/kube_names.h"
#include "sources/trace/framework_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (data[0] % 2 == 0) {
    (void)vw::trace::LooksLikeFrameworkLog(text);
    (void)vw::trace::IsFrameworkLogHead(text, true);
    auto log = vw::trace::ParseFrameworkLog(text, "fuzz.log");
    if (log.ok()) (void)vw::detection::SplitFrameworkLog(log->steps);
    return 0;
  }
  for (size_t start = 0; start <= text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string entry(text.substr(start, end - start));
    vw::procfs::KubePod pod;
    vw::procfs::KubeContainer container;
    std::string id;
    (void)vw::procfs::ParsePodLogDir(entry, pod, id);
    (void)vw::procfs::ParseContainerLogLink(entry, container, id);
    start = end + 1;
  }
  return 0;
}
