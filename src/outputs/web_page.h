// The live page the `watch` daemon serves at "/": one HTML document with its CSS and JavaScript
// built into the binary (from src/outputs/web/ at build time), no external asset or URL. The page
// polls GET /api/v1/status (the `check --json` object) every 5 s and
// GET /api/v1/history?series=gpu:N&from=ISO&to=ISO (`{"schema":"vramwatch.history/1",
// "total_bytes":N,"points":[[t,bytes],...],"floor":[[t,bytes],...]}`) every 15 s, and draws per
// GPU a card (used/total bar, verdict, leak rate, runway), an SVG chart of the last 6 hours with
// the capacity line and, for a leak, the forecast to the OOM marker, and the process table; above
// them the firing alerts and the findings. When the daemon stops answering it says so ("daemon
// unreachable … since …, showing data from …") and keeps the last data, dimmed.
//
// DOM contract: `article.vw-card[data-gpu]` per GPU holding one `svg[data-gpu]`,
// `[data-role=oom]` in the chart of a leaking GPU with a time to OOM, `tr[data-pid][data-state]`
// per process, `tr[data-role=finding]`, `tr[data-role=alert]`, `#vw-conn[data-state=ok|down]`.
//
// Thread-safe: returns a copy built once.
#pragma once

#include <string>

namespace vw::outputs {

// The whole page (text/html; charset=utf-8).
const std::string& WebPageHtml();

}  // namespace vw::outputs
