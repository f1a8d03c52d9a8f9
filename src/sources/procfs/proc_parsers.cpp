#include "sources/procfs/proc_parsers.h"

#include <algorithm>
#include <charconv>
#include <regex>

namespace vw::procfs {
namespace {

template <typename T>
bool ToNumber(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\n') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool IsHex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

Result<StatFields> ParseStat(std::string_view text, std::string_view what) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Status::ParseError(std::string(what) + ": expected 'PID (comm) STATE ...', got no '(comm)'");
  }
  StatFields f;
  std::string_view pid_text = text.substr(0, open);
  while (!pid_text.empty() && pid_text.back() == ' ') pid_text.remove_suffix(1);
  if (!ToNumber(pid_text, f.pid)) {
    return Status::ParseError(std::string(what) + ":1:1: expected a PID before '(', got '" + std::string(pid_text) +
                              "'");
  }
  f.comm = std::string(text.substr(open + 1, close - open - 1));
  auto rest = SplitWhitespace(text.substr(close + 1));
  // rest[0] is field 3 (state); field N is rest[N - 3].
  if (rest.size() < 20) {
    return Status::ParseError(std::string(what) + ": expected at least 22 fields, got " +
                              std::to_string(rest.size() + 2));
  }
  if (rest[0].size() != 1) {
    return Status::ParseError(std::string(what) + ": field 3: expected one state letter, got '" + std::string(rest[0]) +
                              "'");
  }
  f.state = rest[0][0];
  if (!ToNumber(rest[1], f.ppid)) {
    return Status::ParseError(std::string(what) + ": field 4: expected the parent's PID, got '" + std::string(rest[1]) +
                              "'");
  }
  struct {
    int field;
    uint64_t* out;
  } wanted[] = {{14, &f.utime_ticks}, {15, &f.stime_ticks}, {22, &f.starttime_ticks}};
  for (auto& w : wanted) {
    std::string_view v = rest[static_cast<size_t>(w.field - 3)];
    if (!ToNumber(v, *w.out)) {
      return Status::ParseError(std::string(what) + ": field " + std::to_string(w.field) +
                                ": expected a tick count, got '" + std::string(v) + "'");
    }
  }
  // Fields 9 (flags) and 20 (threads) are read where given; a stat without them keeps 0 ("not known").
  if (uint64_t v = 0; ToNumber(rest[9 - 3], v)) f.flags = v;
  if (int64_t n = 0; ToNumber(rest[20 - 3], n)) f.num_threads = n;
  return f;
}

ProcState StateFromLetter(char c) {
  switch (c) {
    case 'R': return ProcState::kRunning;
    case 'S':
    case 'I': return ProcState::kSleeping;
    case 'D': return ProcState::kDiskSleep;
    case 'Z': return ProcState::kZombie;
    case 'T':
    case 't': return ProcState::kStopped;
    case 'X':
    case 'x': return ProcState::kDead;
    default: return ProcState::kUnknown;
  }
}

char LetterFromState(ProcState s) {
  switch (s) {
    case ProcState::kRunning: return 'R';
    case ProcState::kSleeping: return 'S';
    case ProcState::kDiskSleep: return 'D';
    case ProcState::kZombie: return 'Z';
    case ProcState::kStopped: return 'T';
    case ProcState::kDead: return 'X';
    case ProcState::kGone: return '-';
    case ProcState::kUnknown: return '?';
  }
  return '?';
}

Result<StatusFields> ParseStatus(std::string_view text, std::string_view what) {
  StatusFields f;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    auto values = SplitWhitespace(line.substr(colon + 1));
    if (key == "Name") {
      f.name = values.empty() ? "" : std::string(line.substr(colon + 1));
      while (!f.name.empty() && (f.name.front() == '\t' || f.name.front() == ' ')) f.name.erase(0, 1);
    } else if (key == "Uid") {
      uint32_t uid = 0;
      if (values.empty() || !ToNumber(values[0], uid)) {
        return Status::ParseError(std::string(what) + ":" + std::to_string(line_no) +
                                  ": expected a numeric UID after 'Uid:'");
      }
      f.uid = uid;
    } else if (key == "PPid") {
      int64_t ppid = 0;
      if (!values.empty() && ToNumber(values[0], ppid)) f.ppid = ppid;
    } else if (key == "NSpid") {
      for (auto v : values) {
        int64_t p = 0;
        if (!ToNumber(v, p)) {
          return Status::ParseError(std::string(what) + ":" + std::to_string(line_no) +
                                    ": expected PIDs after 'NSpid:', got '" + std::string(v) + "'");
        }
        f.nspid.push_back(p);
      }
    }
  }
  return f;
}

std::string ParseCmdline(std::string_view raw) {
  while (!raw.empty() && raw.back() == '\0') raw.remove_suffix(1);
  std::string out(raw);
  for (char& c : out) {
    if (c == '\0') c = ' ';
  }
  return out;
}

CgroupRefs ParseCgroup(std::string_view text) {
  CgroupRefs r;
  static const std::regex kPod(
      R"(pod([0-9a-fA-F]{8}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{4}[-_][0-9a-fA-F]{12}))");
  // A static pod's UID is the kubelet's hash of its manifest: 32 hex digits, no dashes.
  static const std::regex kStaticPod(R"(pod([0-9a-fA-F]{32})(?:\.slice|/|$))");
  static const std::regex kJob(R"((?:^|/)job_([0-9]+)(?:/|$))");
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    // "hierarchy:controllers:path"; the path may itself contain ':'.
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string path(line.substr(c2 + 1));

    // Container ID: the last 64-hex path segment, bare or with a runtime prefix and ".scope".
    size_t seg_start = 0;
    while (seg_start <= path.size()) {
      size_t seg_end = path.find('/', seg_start);
      if (seg_end == std::string::npos) seg_end = path.size();
      std::string_view seg(path.data() + seg_start, seg_end - seg_start);
      std::string runtime;
      if (seg.size() > 6 && seg.substr(seg.size() - 6) == ".scope") seg.remove_suffix(6);
      static constexpr std::pair<std::string_view, std::string_view> kPrefixes[] = {
          {"docker-", "docker"}, {"cri-containerd-", "containerd"},
          {"crio-", "crio"},     {"containerd-", "containerd"},
          {"libpod-", "podman"}, {"nerdctl-", "nerdctl"}};
      // The systemd cgroup driver's unconverted form, "SLICE:PREFIX:ID" in one segment
      // ("kubepods-burstable-pod<uid>.slice:cri-containerd:<id>", under containerd.service).
      if (size_t last = seg.rfind(':'); last != std::string_view::npos) {
        const std::string_view head = seg.substr(0, last);
        const size_t first = head.rfind(':');
        const std::string_view prefix = first == std::string_view::npos ? std::string_view() : head.substr(first + 1);
        seg.remove_prefix(last + 1);
        for (auto [p, name] : kPrefixes) {
          if (!prefix.empty() && p.substr(0, p.size() - 1) == prefix) runtime = name;
        }
      } else {
        for (auto [prefix, name] : kPrefixes) {
          if (seg.substr(0, prefix.size()) == prefix) {
            seg.remove_prefix(prefix.size());
            runtime = name;
            break;
          }
        }
      }
      if (IsHex64(seg)) {
        // A bare ID right under "/docker/" is Docker's; one further down (a kind node's pods under
        // its own container's "/docker/<id>/kubepods/...") is not.
        if (runtime.empty()) {
          std::string_view before(path.data(), seg_start);
          if (before.size() >= 8 && before.substr(before.size() - 8) == "/docker/") runtime = "docker";
        }
        r.container_id = std::string(seg);
        r.runtime = runtime;
      }
      seg_start = seg_end + 1;
    }
    std::smatch m;
    if (r.pod_uid.empty() && std::regex_search(path, m, kPod)) {
      std::string uid = m[1].str();
      for (char& ch : uid) {
        if (ch == '_') ch = '-';
      }
      r.pod_uid = uid;
    } else if (r.pod_uid.empty() && path.find("kubepods") != std::string::npos &&
               std::regex_search(path, m, kStaticPod)) {
      r.pod_uid = m[1].str();
    }
    if (r.slurm_job.empty() && path.find("slurm") != std::string::npos && std::regex_search(path, m, kJob)) {
      r.slurm_job = m[1].str();
    }
  }
  return r;
}

std::string UserFromPasswd(std::string_view passwd_text, uint32_t uid) {
  size_t pos = 0;
  while (pos < passwd_text.size()) {
    size_t end = passwd_text.find('\n', pos);
    if (end == std::string_view::npos) end = passwd_text.size();
    std::string_view line = passwd_text.substr(pos, end - pos);
    pos = end + 1;
    // name:password:uid:gid:gecos:home:shell
    size_t a = line.find(':');
    if (a == std::string_view::npos) continue;
    size_t b = line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    size_t c = line.find(':', b + 1);
    if (c == std::string_view::npos) continue;
    uint32_t u = 0;
    if (ToNumber(line.substr(b + 1, c - b - 1), u) && u == uid) return std::string(line.substr(0, a));
  }
  return "";
}

std::optional<int64_t> PidFromSched(std::string_view text) {
  size_t nl = text.find('\n');
  std::string_view first = text.substr(0, nl);
  size_t close = first.rfind(',');
  if (close == std::string_view::npos) return std::nullopt;
  size_t open = first.rfind('(', close);
  if (open == std::string_view::npos) return std::nullopt;
  int64_t pid = 0;
  if (!ToNumber(first.substr(open + 1, close - open - 1), pid)) return std::nullopt;
  return pid;
}

namespace {

// "/host\\040proc" -> "/host proc" (the kernel writes space, tab, newline and backslash as octal).
std::string UnescapeMountPath(std::string_view s) {
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && octal(s[i + 1]) && octal(s[i + 2]) && octal(s[i + 3])) {
      out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

}  // namespace

std::optional<ProcMountOptions> ProcMountOptionsAt(std::string_view text, std::string_view mount_point) {
  std::optional<ProcMountOptions> found;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    auto fields = SplitWhitespace(text.substr(pos, end - pos));
    pos = end + 1;
    std::string_view where, fstype, options;
    auto dash = std::find(fields.begin(), fields.end(), std::string_view("-"));
    if (dash != fields.end() && dash - fields.begin() >= 6 && fields.end() - dash >= 4) {
      // mountinfo: ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER_OPTIONS
      where = fields[4];
      fstype = *(dash + 1);
      options = *(dash + 3);
    } else if (dash == fields.end() && fields.size() >= 4) {
      // mounts: SOURCE MOUNT_POINT FSTYPE OPTIONS DUMP PASS
      where = fields[1];
      fstype = fields[2];
      options = fields[3];
    } else {
      continue;
    }
    if (fstype != "proc" || UnescapeMountPath(where) != mount_point) continue;
    ProcMountOptions o;
    size_t i = 0;
    while (i <= options.size()) {
      size_t comma = options.find(',', i);
      if (comma == std::string_view::npos) comma = options.size();
      std::string_view opt = options.substr(i, comma - i);
      if (opt.substr(0, 8) == "hidepid=") o.hidepid = std::string(opt.substr(8));
      if (uint32_t gid = 0; opt.substr(0, 4) == "gid=" && ToNumber(opt.substr(4), gid)) o.gid = gid;
      i = comma + 1;
    }
    found = o;
  }
  return found;
}

std::optional<double> ParseUptime(std::string_view text) {
  auto fields = SplitWhitespace(text);
  if (fields.empty()) return std::nullopt;
  double v = 0;
  auto [p, ec] = std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), v);
  if (ec != std::errc() || p != fields[0].data() + fields[0].size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace vw::procfs
