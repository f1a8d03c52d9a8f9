// What each Xid code means for someone chasing GPU memory leaks and stuck processes: mnemonic
// (from the driver's own names), meaning, and the next step a person should take.
//
// `hardware` marks the set that points at a different incident than a leak (ECC, row remapping,
// NVLink, fallen off the bus, PMU halt, GSP): 48 62 63 64 74 79 92 94 95 119 120 140 171 172.
// Those call for ruling out hardware before anything else.
#pragma once

#include <optional>
#include <string_view>

namespace vw::kernel {

enum class XidClass {
  kApplication,    // the application faulted (bad address, illegal instruction): fix or restart it
  kStuck,          // the GPU or a channel stopped making progress: restart the app, reset if it persists
  kHardware,       // memory / bus / firmware fault: a hardware incident, not a leak
  kInformational,  // cleanup or summary events
};

struct XidInfo {
  int code = 0;
  std::string_view mnemonic;  // "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS"
  std::string_view meaning;   // "GPU has fallen off the bus"
  std::string_view action;    // what to do next
  XidClass klass = XidClass::kApplication;
  bool hardware() const { return klass == XidClass::kHardware; }
};

// nullptr for codes the table does not know (the finding then says "unknown Xid").
const XidInfo* LookupXid(int code);

// The class of one Xid line: the catalog's, except for 154, which names the recovery action the
// GPU needs now ("GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)"):
// a reset or reboot (also "Drain and Reset") is kHardware, a drain kApplication, "None"
// kInformational, a message naming no action kApplication. Unknown codes: nullopt.
std::optional<XidClass> ClassOfLine(int code, std::string_view message);

// True for a line that stays true until the GPU is reset (kHardware by ClassOfLine): kept for the
// whole boot, not dropped after --xid-max-age.
bool StaysUntilReset(int code, std::string_view message);

}  // namespace vw::kernel
