#include "cli/xid_summary.h"

#include <algorithm>
#include <map>
#include <utility>

#include "sources/kernel/xid_catalog.h"

namespace vw::cli {

namespace {

detection::XidSummary::Class ClassOf(std::optional<kernel::XidClass> klass) {
  using C = detection::XidSummary::Class;
  if (!klass) return C::kUnknown;
  switch (*klass) {
    case kernel::XidClass::kApplication: return C::kApplication;
    case kernel::XidClass::kStuck: return C::kStuck;
    case kernel::XidClass::kHardware: return C::kHardware;
    case kernel::XidClass::kInformational: return C::kInformational;
  }
  return C::kUnknown;
}

}  // namespace

std::string XidGpuKey(const kernel::XidEvent& e, const kernel::KernelLogScan& scan, const HostSnapshot& host) {
  auto uuid = scan.uuid_by_pci.find(e.pci_bus_id);
  for (const auto& g : host.gpus) {
    if ((!g.pci_bus_id.empty() && kernel::NormalizePciBusId(g.pci_bus_id) == e.pci_bus_id) ||
        (uuid != scan.uuid_by_pci.end() && !g.uuid.empty() && g.uuid == uuid->second)) {
      return detection::GpuKey(g);
    }
  }
  return {};
}

std::vector<detection::XidSummary> SummarizeXids(const kernel::KernelLogScan& scan, const HostSnapshot& host) {
  std::map<std::pair<std::string, int>, detection::XidSummary> groups;
  for (const auto& e : scan.events) {
    std::string key = XidGpuKey(e, scan, host);
    if (key.empty()) key = e.pci_bus_id;
    auto& s = groups[{key, e.xid}];
    if (s.count == 0) {
      const kernel::XidInfo* info = kernel::LookupXid(e.xid);
      s.gpu = key;
      s.xid = e.xid;
      if (info) {
        s.mnemonic = std::string(info->mnemonic);
        s.meaning = std::string(info->meaning);
        s.action = std::string(info->action);
      }
    }
    s.count += 1 + e.folded;
    if (e.pid && std::find(s.pids.begin(), s.pids.end(), *e.pid) == s.pids.end() && *e.pid != 0) {
      s.pids.push_back(*e.pid);
    }
    if (e.gpu_instance &&
        std::find(s.gpu_instances.begin(), s.gpu_instances.end(), *e.gpu_instance) == s.gpu_instances.end()) {
      s.gpu_instances.push_back(*e.gpu_instance);
    }
    s.last_message = e.message;
    s.klass = ClassOf(kernel::ClassOfLine(e.xid, e.message));  // 154: the action of its latest line
    s.last_monotonic_s = e.monotonic_s;
    if (e.caused_by_xid) s.caused_by_xid = e.caused_by_xid;
  }
  std::vector<detection::XidSummary> out;
  for (auto& [k, s] : groups) out.push_back(std::move(s));
  return out;
}

}  // namespace vw::cli
