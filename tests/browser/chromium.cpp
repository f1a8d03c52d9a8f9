// Headless Chromium runner and DOM scanner (see chromium.h).
#include "chromium.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <sstream>

namespace vw::browser_test {
namespace {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A fresh profile folder per run: parallel Chromium instances must not share one.
std::string MakeProfileDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "vw-chromium-XXXXXX").string();
  char* made = mkdtemp(tmpl.data());
  return made ? std::string(made) : std::string();
}

struct Run {
  int status = -1;
  std::string out;
};

Run RunCommand(const std::string& cmd) {
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string BaseCommand(const std::string& chromium, const PageRun& run, const std::string& profile) {
  std::string cmd = "TZ=" + ShellQuote(run.tz) + " timeout 120 " + ShellQuote(chromium) +
                    " --headless=new --no-sandbox --disable-gpu --no-first-run --no-default-browser-check"
                    " --disable-extensions --hide-scrollbars --user-data-dir=" +
                    ShellQuote(profile) + " --window-size=" + std::to_string(run.width) + "," +
                    std::to_string(run.height);
  if (run.dark) cmd += " --force-dark-mode --blink-settings=preferredColorScheme=0";
  if (run.virtual_time_budget_ms > 0) cmd += " --virtual-time-budget=" + std::to_string(run.virtual_time_budget_ms);
  return cmd;
}

}  // namespace

std::optional<std::string> FindChromium() {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/chromium";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

DomResult DumpDom(const PageRun& run) {
  DomResult res;
  auto chromium = FindChromium();
  if (!chromium) {
    res.error = "chromium is not on PATH (Debian package `chromium`, installed by scripts/bootstrap for tests)";
    return res;
  }
  std::string profile = MakeProfileDir();
  Run r = RunCommand(BaseCommand(*chromium, run, profile) + " --dump-dom " + ShellQuote(run.url) + " 2>/dev/null");
  std::error_code ec;
  std::filesystem::remove_all(profile, ec);
  if (r.status != 0 || r.out.empty()) {
    res.error = "chromium --dump-dom " + run.url + " failed with status " + std::to_string(r.status);
    return res;
  }
  res.dom = std::move(r.out);
  return res;
}

std::string Screenshot(const PageRun& run, const std::string& png_path) {
  auto chromium = FindChromium();
  if (!chromium) return "chromium is not on PATH (Debian package `chromium`, installed by scripts/bootstrap for tests)";
  std::filesystem::create_directories(std::filesystem::path(png_path).parent_path());
  std::filesystem::remove(png_path);
  std::string profile = MakeProfileDir();
  Run r = RunCommand(BaseCommand(*chromium, run, profile) + " --screenshot=" + ShellQuote(png_path) + " " +
                     ShellQuote(run.url) + " 2>&1");
  std::error_code ec;
  std::filesystem::remove_all(profile, ec);
  if (r.status != 0) return "chromium --screenshot failed with status " + std::to_string(r.status) + ": " + r.out;
  if (!std::filesystem::exists(png_path) || std::filesystem::file_size(png_path) == 0) {
    return "chromium wrote no screenshot to " + png_path;
  }
  return {};
}

bool Element::Has(const std::string& name, const std::string& value) const {
  auto it = attrs.find(name);
  return it != attrs.end() && it->second == value;
}

std::vector<Element> Elements(const std::string& dom, const std::string& tag) {
  static const std::regex kAttr(R"re(([A-Za-z_:][-A-Za-z0-9_:.]*)(?:="([^"]*)")?)re");
  std::vector<Element> out;
  size_t pos = 0;
  while ((pos = dom.find('<', pos)) != std::string::npos) {
    size_t name_end = pos + 1;
    while (name_end < dom.size() && (std::isalnum(static_cast<unsigned char>(dom[name_end])) || dom[name_end] == '-')) {
      ++name_end;
    }
    std::string name = dom.substr(pos + 1, name_end - pos - 1);
    size_t close = dom.find('>', name_end);
    if (name.empty() || close == std::string::npos) {
      ++pos;
      continue;
    }
    if (name == "script" || name == "style") {  // their text is not markup: skip to the end tag
      size_t end = dom.find("</" + name, close);
      pos = end == std::string::npos ? dom.size() : end + 1;
      continue;
    }
    if (tag == "*" || name == tag) {
      Element e;
      e.tag = name;
      e.offset = pos;
      std::string attrs = dom.substr(name_end, close - name_end);
      for (auto it = std::sregex_iterator(attrs.begin(), attrs.end(), kAttr); it != std::sregex_iterator(); ++it) {
        e.attrs[(*it)[1].str()] = (*it)[2].str();
      }
      out.push_back(std::move(e));
    }
    pos = close;
  }
  return out;
}

std::vector<Element> Select(const std::string& dom, const std::string& tag, const std::string& name,
                            const std::optional<std::string>& value) {
  std::vector<Element> out;
  for (auto& e : Elements(dom, tag)) {
    auto it = e.attrs.find(name);
    if (it == e.attrs.end()) continue;
    if (value && it->second != *value) continue;
    out.push_back(std::move(e));
  }
  return out;
}

std::string TextOf(const std::string& dom) {
  std::string html = dom;
  for (const char* name : {"script", "style"}) {
    std::string open = std::string("<") + name, close = std::string("</") + name + ">";
    for (size_t p = 0; (p = html.find(open, p)) != std::string::npos;) {
      size_t end = html.find(close, p);
      if (end == std::string::npos) break;
      html.erase(p, end + close.size() - p);
    }
  }
  std::string text;
  bool in_tag = false;
  for (char c : html) {
    if (c == '<') {
      in_tag = true;
    } else if (c == '>') {
      in_tag = false;
      text += ' ';
    } else if (!in_tag) {
      text += c;
    }
  }
  for (auto [from, to] : std::array<std::pair<const char*, const char*>, 5>{
           {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}}}) {
    for (size_t p = 0; (p = text.find(from, p)) != std::string::npos;) text.replace(p, std::string(from).size(), to);
  }
  return text;
}

}  // namespace vw::browser_test
