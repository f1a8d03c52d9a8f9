#include "sources/kernel/xid_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/ascii.h"

namespace vw::kernel {
namespace {

bool IsHex(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

template <typename T>
bool ToNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// The words of `s` between single or repeated spaces.
std::vector<std::string_view> Words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < s.size()) {
    while (at < s.size() && s[at] == ' ') ++at;
    const size_t end = std::min(s.find(' ', at), s.size());
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end;
  }
  return out;
}

bool StartsWithIsoDate(std::string_view s) {
  return s.size() >= 10 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' && s[7] == '-';
}

// Reads what precedes "NVRM:" for a monotonic time and a wall clock.
void ParsePrefix(std::string_view prefix, XidEvent& e) {
  // A syslog priority as forwarded over the network: "<4>".
  if (prefix.substr(0, 1) == "<") {
    const size_t gt = prefix.find('>');
    if (gt != std::string_view::npos && gt <= 4) prefix.remove_prefix(gt + 1);
  }
  // RFC 5424: "1 2026-12-07T13:47:00.123Z host kernel - - - " (version, then the time).
  if (prefix.substr(0, 2) == "1 " && StartsWithIsoDate(prefix.substr(2))) {
    const std::vector<std::string_view> words = Words(prefix);
    e.wall_clock = std::string(words[1]);
    return;
  }
  // kmsg: "6,1234,5678901,-;" (level,seq,usec,flags;)
  size_t semi = prefix.find(';');
  if (semi != std::string_view::npos) {
    std::string_view head = prefix.substr(0, semi);
    size_t c1 = head.find(',');
    size_t c2 = c1 == std::string_view::npos ? c1 : head.find(',', c1 + 1);
    size_t c3 = c2 == std::string_view::npos ? c2 : head.find(',', c2 + 1);
    uint64_t usec = 0;
    if (c2 != std::string_view::npos &&
        ToNumber(head.substr(c2 + 1, (c3 == std::string_view::npos ? head.size() : c3) - c2 - 1), usec)) {
      e.monotonic_s = static_cast<double>(usec) / 1e6;
      return;
    }
  }
  // dmesg --time-format=iso: "2024-08-30T11:43:09,123456+02:00 " (no host, no "kernel:").
  if (StartsWithIsoDate(prefix) && prefix.size() > 10 && prefix[10] == 'T' &&
      prefix.find(" kernel:") == std::string_view::npos && prefix.find('[') == std::string_view::npos) {
    std::string stamp(Words(prefix)[0]);
    if (const size_t comma = stamp.find(','); comma != std::string::npos) stamp[comma] = '.';  // its fraction
    e.wall_clock = std::move(stamp);
    return;
  }
  size_t open = prefix.rfind('[');
  size_t close = open == std::string_view::npos ? open : prefix.find(']', open);
  if (close != std::string_view::npos) {
    std::string_view inside = Trim(prefix.substr(open + 1, close - open - 1));
    double seconds = 0;
    auto [p, ec] = std::from_chars(inside.data(), inside.data() + inside.size(), seconds);
    if (ec == std::errc() && p == inside.data() + inside.size()) {
      e.monotonic_s = seconds;
    } else if (!inside.empty()) {
      e.wall_clock = std::string(inside);  // dmesg --ctime
    }
  }
  // syslog / journald: "Feb 15 17:37:45 host kernel: ", or with an ISO 8601 stamp (rsyslog's
  // RFC 3339 format, journalctl -o short-iso): "2026-11-27T10:00:00.123456+00:00 host kernel: ",
  // or journalctl -o short-full's "Mon 2026-12-07 13:47:00 UTC host kernel: ".
  std::string_view before = open == std::string_view::npos ? prefix : prefix.substr(0, open);
  size_t k = before.find(" kernel:");
  if (k != std::string_view::npos && e.wall_clock.empty()) {
    std::string_view head = Trim(before.substr(0, k));
    if (head.size() > 4 && std::isalpha(static_cast<unsigned char>(head[0])) && head[3] == ' ' &&
        StartsWithIsoDate(head.substr(4))) {
      head.remove_prefix(4);  // short-full's weekday
    }
    size_t last_space = head.rfind(' ');  // drop the host name
    const bool iso = head.size() > 10 && StartsWithIsoDate(head) && (head[10] == 'T' || head[10] == ' ');
    if (iso) {
      // Every word up to the host name: "2026-11-27T10:00:00+00:00", "2026-12-07 13:47:00", or
      // with the zone's name, "2026-12-07 13:47:00 UTC".
      const std::vector<std::string_view> words = Words(head);
      const size_t stamp_words = words.size() > 1 ? words.size() - 1 : words.size();
      for (size_t i = 0; i < stamp_words; ++i) {
        if (!e.wall_clock.empty()) e.wall_clock += ' ';
        e.wall_clock += words[i];
      }
    } else if (last_space != std::string_view::npos && head.size() >= 15) {
      e.wall_clock = std::string(head.substr(0, 15));
    }
  }
}

}  // namespace

std::string NormalizePciBusId(std::string_view text) {
  text = Trim(text);
  if (text.substr(0, 4) == "PCI:" || text.substr(0, 4) == "pci:") text.remove_prefix(4);
  // Split into [domain:]bus:device[.function]
  std::string_view function = "0";
  size_t dot = text.rfind('.');
  if (dot != std::string_view::npos) {
    function = text.substr(dot + 1);
    text = text.substr(0, dot);
  }
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (true) {
    size_t c = text.find(':', pos);
    parts.push_back(text.substr(pos, c == std::string_view::npos ? std::string_view::npos : c - pos));
    if (c == std::string_view::npos) break;
    pos = c + 1;
  }
  std::string_view domain = "0", bus, device;
  if (parts.size() == 3) {
    domain = parts[0];
    bus = parts[1];
    device = parts[2];
  } else if (parts.size() == 2) {
    bus = parts[0];
    device = parts[1];
  } else {
    return "";
  }
  if (!IsHex(domain) || domain.size() > 8 || !IsHex(bus) || bus.size() > 2 || !IsHex(device) || device.size() > 2 ||
      !IsHex(function) || function.size() > 1) {
    return "";
  }
  auto pad = [](std::string_view s, size_t n) { return std::string(n - s.size(), '0') + AsciiUpper(s); };
  return pad(domain, 8) + ":" + pad(bus, 2) + ":" + pad(device, 2) + "." + AsciiUpper(function);
}

std::optional<XidEvent> ParseXidLine(std::string_view line) {
  static constexpr std::string_view kMarker = "NVRM: Xid (";
  size_t at = line.find(kMarker);
  if (at == std::string_view::npos) return std::nullopt;
  XidEvent e;
  e.line = std::string(Trim(line));
  std::string_view rest = line.substr(at + kMarker.size());
  size_t close = rest.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inside = rest.substr(0, close);
  rest = rest.substr(close + 1);
  // inside: "PCI:0000:3b:00" [" GPU-I:02" [" GPU-CI:01"]]
  size_t space = inside.find(' ');
  e.pci_bus_id = NormalizePciBusId(inside.substr(0, space));
  if (e.pci_bus_id.empty()) return std::nullopt;
  while (space != std::string_view::npos) {
    inside = inside.substr(space + 1);
    space = inside.find(' ');
    std::string_view tok = inside.substr(0, space);
    unsigned v = 0;
    if (tok.substr(0, 6) == "GPU-I:" && ToNumber(tok.substr(6), v)) e.gpu_instance = v;
    if (tok.substr(0, 7) == "GPU-CI:" && ToNumber(tok.substr(7), v)) e.compute_instance = v;
  }
  if (rest.substr(0, 1) != ":") return std::nullopt;
  rest = Trim(rest.substr(1));
  // Every driver writes ", " after the code: a line without it was cut, maybe inside the code
  // ("79" cut to "7"), so it is not read as an event.
  size_t comma = rest.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  if (!ToNumber(Trim(rest.substr(0, comma)), e.xid) || e.xid < 0) return std::nullopt;
  rest = Trim(rest.substr(comma + 1));
  if (rest.substr(0, 4) == "pid=") {
    size_t end = rest.find(',');
    std::string_view pid = Trim(rest.substr(4, end == std::string_view::npos ? std::string_view::npos : end - 4));
    int64_t p = 0;
    // '<unknown>' (or a negative PID) stays missing, and so does a PID the line was cut in.
    if (end != std::string_view::npos && ToNumber(pid, p) && p >= 0) e.pid = p;
    rest = end == std::string_view::npos ? std::string_view() : Trim(rest.substr(end + 1));
    if (rest.substr(0, 5) == "name=") {
      size_t name_end = rest.find(", ");
      std::string_view name =
          rest.substr(5, name_end == std::string_view::npos ? std::string_view::npos : name_end - 5);
      if (name != "<unknown>") e.process_name = std::string(name);
      rest = name_end == std::string_view::npos ? std::string_view() : Trim(rest.substr(name_end + 1));
    }
  }
  static constexpr std::string_view kCaused = " caused by previous Xid ";
  size_t caused = rest.rfind(kCaused);
  if (caused != std::string_view::npos) {
    int prev = 0;
    if (ToNumber(Trim(rest.substr(caused + kCaused.size())), prev)) {
      e.caused_by_xid = prev;
      rest = Trim(rest.substr(0, caused));
    }
  }
  e.message = std::string(rest);
  ParsePrefix(line.substr(0, at), e);
  return e;
}

std::string UnreadableXidNote(const KernelLogScan& scan, std::string_view source, bool line_numbers) {
  if (scan.unreadable_xid_lines == 0) return "";
  const bool one = scan.unreadable_xid_lines == 1;
  // "(line 3: ...)", "(...)", "(the first, line 3: ...)" or "(the first: ...)".
  std::string which = one ? "" : "the first";
  if (line_numbers) which += (one ? "line " : ", line ") + std::to_string(scan.first_unreadable_line);
  if (!which.empty()) which += ": ";
  return std::string(source) + ": " + std::to_string(scan.unreadable_xid_lines) + (one ? " Xid line" : " Xid lines") +
         " could not be read and " + (one ? "was" : "were") + " left out (" + which + "\"" + scan.first_unreadable +
         "\"); expected \"NVRM: Xid (PCI:<bus id>): <code>, ...\"";
}

KernelLogScan ScanKernelLog(std::string_view text) {
  KernelLogScan scan;
  static constexpr std::string_view kMap = "NVRM: GPU at PCI:";
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++scan.lines;
    if (auto e = ParseXidLine(line)) {
      scan.events.push_back(std::move(*e));
      continue;
    }
    if (line.find("NVRM: Xid (") != std::string_view::npos) {
      if (scan.unreadable_xid_lines++ == 0) {
        scan.first_unreadable_line = scan.lines;
        scan.first_unreadable = std::string(Trim(line.substr(0, 200)));
      }
      continue;
    }
    size_t at = line.find(kMap);
    if (at != std::string_view::npos) {
      std::string_view rest = line.substr(at + kMap.size());
      size_t sep = rest.find(": GPU-");
      if (sep == std::string_view::npos) continue;
      std::string pci = NormalizePciBusId(rest.substr(0, sep));
      std::string_view uuid = Trim(rest.substr(sep + 2));
      if (!pci.empty() && !uuid.empty()) scan.uuid_by_pci[pci] = std::string(uuid);
    }
  }
  return scan;
}

size_t DropOlderThan(KernelLogScan& scan, double uptime_s, double max_age_s,
                     bool (*keep_always)(const XidEvent& event)) {
  size_t before = scan.events.size();
  std::erase_if(scan.events, [&](const XidEvent& e) {
    if (!e.monotonic_s || (keep_always != nullptr && keep_always(e))) return false;
    return uptime_s - *e.monotonic_s > max_age_s;
  });
  return before - scan.events.size();
}

}  // namespace vw::kernel
