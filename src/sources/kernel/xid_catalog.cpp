#include "sources/kernel/xid_catalog.h"

namespace vw::kernel {
namespace {

constexpr XidInfo kCatalog[] = {
    {8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing (channel idle timeout)",
     "Restart the application; if it repeats, check for a hang in the kernel or driver.", XidClass::kStuck},
    {13, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception (usually an application fault)",
     "Restart the application and check it for out-of-bounds accesses or illegal instructions.",
     XidClass::kApplication},
    {31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault (illegal address)",
     "Restart the application; an illegal memory access usually points at the application, rarely the driver.",
     XidClass::kApplication},
    {32, "ROBUST_CHANNEL_PBDMA_ERROR", "invalid or corrupted push buffer stream",
     "Restart the application; if it repeats, check PCIe link quality.", XidClass::kApplication},
    {43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing after an application fault",
     "The application must terminate and restart; the GPU itself stays healthy.", XidClass::kApplication},
    {45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "preemptive cleanup of channels (process killed or earlier error)",
     "Usually follows Ctrl-C, SIGKILL or an earlier Xid: look at the Xid it was caused by.", XidClass::kInformational},
    {46, "ROBUST_CHANNEL_GPU_TIMEOUT_ERROR", "GPU stopped processing (timeout)",
     "Stop the GPU's applications; a person should reset the GPU if it does not recover.", XidClass::kStuck},
    {48, "ROBUST_CHANNEL_GPU_ECC_DBE", "uncorrectable double-bit ECC error",
     "Rule out hardware: drain the GPU, reset it or reboot to clear, and check ECC and retired-page counts.",
     XidClass::kHardware},
    {61, "PMU_BREAKPOINT", "internal micro-controller breakpoint or warning",
     "Watch for an Xid 62 after it; a person should reset the GPU if it repeats.", XidClass::kStuck},
    {62, "PMU_HALT_ERROR", "internal micro-controller halt",
     "Rule out hardware/firmware: a person should reset the GPU; GSP errors (Xid 119, 120) often follow.",
     XidClass::kHardware},
    {63, "INFOROM_DRAM_RETIREMENT_EVENT", "GPU memory page retirement or row remapping recorded",
     "Rule out hardware: a reset (row remapping) or reboot (page retirement) activates it; watch the counts.",
     XidClass::kHardware},
    {64, "INFOROM_DRAM_RETIREMENT_FAILURE", "GPU memory remapping failure",
     "Rule out hardware: reset the GPU; repeated failures make the GPU a replacement candidate.", XidClass::kHardware},
    {68, "ROBUST_CHANNEL_NVDEC0_ERROR", "video decoder exception", "Restart the application.", XidClass::kApplication},
    {74, "NVLINK_ERROR", "NVLink error",
     "Rule out hardware: reset or reboot to clear; check the remote end of the link too.", XidClass::kHardware},
    {79, "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS", "GPU has fallen off the bus",
     "Rule out hardware: the GPU no longer answers over PCIe and its processes are stuck; the node needs a "
     "reboot or power cycle by a person.",
     XidClass::kHardware},
    {92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC error rate",
     "Rule out hardware: watch the ECC counters; plan a maintenance window.", XidClass::kHardware},
    {94, "ROBUST_CHANNEL_CONTAINED_ERROR", "contained memory error (one application affected)",
     "Rule out hardware: restart the affected application; reset the GPU when convenient.", XidClass::kHardware},
    {95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "uncontained memory error (several applications affected)",
     "Rule out hardware: stop the GPU's applications; a person must reset the GPU before they restart.",
     XidClass::kHardware},
    {109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout",
     "Restart the application; a person should reset the GPU if it repeats.", XidClass::kStuck},
    {119, "GSP_RPC_TIMEOUT", "GSP firmware RPC timeout",
     "Rule out hardware/firmware: a person should reset the GPU, or power cycle it if it persists.",
     XidClass::kHardware},
    {120, "GSP_ERROR", "GSP firmware error",
     "Rule out hardware/firmware: a person should reset the GPU, or power cycle it if it persists.",
     XidClass::kHardware},
    {140, "UNRECOVERABLE_ECC_ERROR_ESCAPE", "uncorrectable ECC error interrupted page offlining or row remapping",
     "Rule out hardware: a person should reset the GPU; check retired pages and remapped rows.", XidClass::kHardware},
    {154, "GPU_RECOVERY_ACTION_CHANGED", "the driver changed the GPU's required recovery action",
     "Read the recovery action in the message (drain, reset, reboot) and follow it; an event from NVML's event "
     "API carries no message: read it in the kernel log.",
     XidClass::kInformational},
    // Newer drivers' detail of an Xid 48: where the uncorrectable error was.
    {171, "UNCORRECTABLE_DRAM_ERROR", "uncorrectable DRAM error (the detail of an Xid 48)",
     "Rule out hardware: drain the GPU, reset it or reboot to clear, and check ECC and remapped-row counts.",
     XidClass::kHardware},
    {172, "UNCORRECTABLE_SRAM_ERROR", "uncorrectable SRAM error (the detail of an Xid 48)",
     "Rule out hardware: drain the GPU, reset it or reboot to clear, and check ECC counts.", XidClass::kHardware},
    // Not the driver's: NVML's event API reports an Xid it does not know as 999.
    {999, "", "an Xid NVML's event API does not know",
     "Read the kernel log at this time for the driver's Xid line: it gives the code and the driver's text.",
     XidClass::kApplication},
};

}  // namespace

const XidInfo* LookupXid(int code) {
  for (const auto& info : kCatalog) {
    if (info.code == code) return &info;
  }
  return nullptr;
}

std::optional<XidClass> ClassOfLine(int code, std::string_view message) {
  const XidInfo* info = LookupXid(code);
  if (info == nullptr) return std::nullopt;
  if (code != 154) return info->klass;
  // The action is the text in parentheses after the last " to ".
  const size_t to = message.rfind(" to ");
  const size_t open = to == std::string_view::npos ? to : message.find('(', to);
  const size_t close = open == std::string_view::npos ? open : message.find(')', open);
  if (close == std::string_view::npos) return XidClass::kApplication;
  const std::string_view action = message.substr(open + 1, close - open - 1);
  if (action.find("Reset") != std::string_view::npos || action.find("Reboot") != std::string_view::npos) {
    return XidClass::kHardware;
  }
  if (action == "None") return XidClass::kInformational;
  return XidClass::kApplication;  // a drain, or an action this build does not know
}

bool StaysUntilReset(int code, std::string_view message) {
  return ClassOfLine(code, message) == XidClass::kHardware;
}

}  // namespace vw::kernel
