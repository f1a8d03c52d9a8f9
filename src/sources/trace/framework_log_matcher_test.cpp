// framework_log.h's parser against the same parser written with std::regex, kept as the reference
// (framework_log_regex_oracle.h): the same results, byte for byte, on generated lines that mix
// keys, units, devices, maxima, numbers and separators with their near misses, on every string of
// framework_log_test.cpp, and on the real logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sources/trace/framework_log.h"
#include "sources/trace/framework_log_regex_oracle.h"

namespace vw::trace {
namespace {

constexpr uint64_t kSeed = 20260314;
constexpr size_t kGeneratedLines = 100000;
constexpr size_t kLinesPerLog = 60;  // generated lines are also read together, as logs of this many
// Long lines run to about this many bytes. The parser reads 64 KiB of a line (framework_log.h), but
// libstdc++'s std::regex recurses once a character and overflows the stack long before that: the
// cut itself is held by framework_log_test.cpp.
constexpr size_t kLongLine = 4096;

// Everything a parse gives, printed: two parses are the same when these strings are.
std::string Show(const Result<FrameworkLog>& r) {
  if (!r.ok()) return "error: " + r.status().message();
  std::ostringstream out;
  auto opt = [&](const std::optional<uint64_t>& v) {
    if (v) {
      out << *v;
    } else {
      out << '-';
    }
  };
  out << "lines " << r->lines << " read " << r->lines_read << " skipped " << r->skipped << '\n';
  for (const FrameworkStep& s : r->steps) {
    out << "step line " << s.line << " device " << s.device << " allocated ";
    opt(s.allocated_bytes);
    out << " reserved ";
    opt(s.reserved_bytes);
    out << " driver ";
    opt(s.driver_used_bytes);
    out << '\n';
  }
  for (const std::string& e : r->skipped_examples) out << "skipped: " << e << '\n';
  return out.str();
}

// The text with its control and non-ASCII bytes escaped, for a failure message.
std::string Escaped(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Compares both parsers on `text`; counts the texts compared and stops reporting after a few
// differences (one broken matcher differs on thousands of lines).
class Compare {
 public:
  // One line, then a line of a value: alone, a line of no allocated or reserved value is an error
  // that would hide its driver figure.
  void Line(std::string_view line) { Log(std::string(line) + "\nallocated: 1 KiB\n", false); }

  void Log(std::string_view text, bool lenient) {
    ++texts_;
    const std::string ours = Show(ParseFrameworkLog(text, "t.log", lenient));
    const std::string oracle = Show(regex_oracle::ParseFrameworkLog(text, "t.log", lenient));
    if (ours != oracle && ++differences_ <= 5) {
      ADD_FAILURE() << "ParseFrameworkLog(lenient " << lenient << ") of '" << Escaped(text.substr(0, 2000))
                    << "'\nmatchers:\n"
                    << ours << "regex oracle:\n"
                    << oracle;
    }
  }

  void Head(std::string_view text) {
    ++texts_;
    if (LooksLikeFrameworkLog(text) != regex_oracle::LooksLikeFrameworkLog(text) && ++differences_ <= 5) {
      ADD_FAILURE() << "LooksLikeFrameworkLog of '" << Escaped(text.substr(0, 2000)) << "'";
    }
    if (IsFrameworkLogHead(text, true) != regex_oracle::IsFrameworkLogHead(text, true) && ++differences_ <= 5) {
      ADD_FAILURE() << "IsFrameworkLogHead of '" << Escaped(text.substr(0, 2000)) << "'";
    }
  }

  // A whole log, strict and lenient, its head, and each of its lines alone.
  void Everything(std::string_view text) {
    Log(text, false);
    Log(text, true);
    Head(text);
    for (std::string_view rest = text; !rest.empty();) {
      const size_t nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      if (!line.empty()) Line(line);
    }
  }

  size_t texts() const { return texts_; }
  size_t differences() const { return differences_; }

 private:
  size_t texts_ = 0;
  size_t differences_ = 0;
};

// Lines as training scripts print them and their near misses: each a few pieces, picked at random,
// glued by separators (or by nothing, so that words run into each other).
class LineGenerator {
 public:
  explicit LineGenerator(uint64_t seed) : rng_(seed) {}

  std::string Line() {
    std::string line;
    if (Chance(5)) line += Pick(kLineStarts);
    const size_t pieces = 1 + Below(8);
    for (size_t i = 0; i < pieces; ++i) {
      line += Piece();
      line += Pick(kSeparators);
    }
    if (Chance(30)) ChangeCase(line);
    if (Chance(15)) line.resize(Below(line.size() + 1));  // cut anywhere, even inside a word
    // A long line, a value near its end (dots: spaces make the regular expression try every split
    // of a long run between \s* and [\s:=|'"]*, seconds a line).
    if (Chance(1)) {
      line += std::string(kLongLine + Below(20) - 10 - std::min(line.size(), kLongLine - 10), '.') + "allocated 1 GiB";
    }
    return line;
  }

 private:
  // Percent chance.
  bool Chance(unsigned percent) { return rng_() % 100 < percent; }
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }
  template <size_t N>
  std::string Pick(const std::string_view (&from)[N]) {
    return std::string(from[Below(N)]);
  }

  std::string Digits(size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out += static_cast<char>('0' + Below(10));
    return out;
  }

  // A number as people print them, and as they do not: signs, thousands separators right and
  // wrong, decimal points and commas, exponents whole and cut.
  std::string Number() {
    std::string out;
    if (Chance(5)) out += '-';
    switch (Below(6)) {
      case 0: out += Digits(1); break;
      case 1: out += Digits(1 + Below(3)); break;
      case 2: out += Digits(4 + Below(7)); break;
      case 3:
        out += Digits(1 + Below(4));
        for (size_t g = 0, groups = 1 + Below(3); g < groups; ++g) out += "," + Digits(Chance(75) ? 3 : Below(5));
        break;
      case 4: out += Digits(1 + Below(4)) + "," + Digits(1 + Below(2)); break;
      default: out += Digits(1 + Below(12)); break;
    }
    if (Chance(35)) out += "." + Digits(Chance(90) ? 1 + Below(4) : 0);
    if (Chance(10)) {
      out += Pick(kExponents);
      out += Digits(Below(3));
    }
    return out;
  }

  // A key and its value, as a line prints them or nearly.
  std::string KeyAndValue() {
    std::string out;
    if (Chance(20)) out += Pick(kBeforeKeys);
    out += Pick(kKeys);
    if (Chance(25)) out += Pick(kCalls);
    out += Pick(kValueSeparators);
    out += Number();
    if (Chance(50)) out += Pick(kSpaces);
    return out + Pick(kUnits);
  }

  // nvidia-smi's figure, as a line prints it or nearly.
  std::string DriverFigure() {
    std::string out = Chance(80) ? "nvidia-smi" : Pick(kWords);
    if (Chance(60)) out += Pick(kSeparators) + Pick(kDevices) + Digits(Below(3));
    out += Pick(kSeparators) + (Chance(80) ? "memory" : Pick(kWords)) + Pick(kSeparators);
    if (Chance(30)) out += Pick(kLineUnits) + Pick(kSeparators);
    out += Number();
    if (Chance(50)) out += Pick(kSpaces);
    return out + Pick(kUnits);
  }

  std::string Piece() {
    switch (Below(18)) {
      case 16:
      case 17: return DriverFigure();
      case 12:
      case 13:
      case 14:
      case 15: return KeyAndValue();
      case 0:
      case 1:
      case 2: return Pick(kKeys);
      case 3: return Pick(kBeforeKeys) + Pick(kKeys);
      case 4: return Pick(kKeys) + Pick(kCalls);
      case 5:
      case 6: return Number() + (Chance(50) ? Pick(kSpaces) : "") + Pick(kUnits);
      case 7: return Pick(kDevices) + (Chance(50) ? Digits(1 + Below(8)) : "");
      case 8: return Pick(kLineUnits);
      case 9: return Pick(kWords);
      case 10: return Pick(kOdd);
      default: {
        std::string word;
        for (size_t i = 0, n = 1 + Below(6); i < n; ++i) word += Pick(kLetters);
        return word;
      }
    }
  }

  void ChangeCase(std::string& line) {
    const bool all = Chance(20);
    for (char& c : line) {
      if (c >= 'a' && c <= 'z' && (all || Chance(20))) c = static_cast<char>(c - 'a' + 'A');
    }
  }

  static constexpr std::string_view kLineStarts[] = {"#",
                                                     "|",
                                                     "| ",
                                                     "  ",
                                                     "{",
                                                     "[rank0] ",
                                                     "[rank1]: ",
                                                     "rank 2 | ",
                                                     "device 3:",
                                                     "rank1234567:",
                                                     "[rank: 4] ",
                                                     "rank=5 ",
                                                     "local_rank=6",
                                                     "global_rank:",
                                                     "rank 7 of 8 ",
                                                     "[rank 9/16]",
                                                     "rank 3 of x",
                                                     "rank=x ",
                                                     "ordereddict([("};
  static constexpr std::string_view kKeys[] = {"allocated",
                                               "alloc",
                                               "reserved",
                                               "memory_allocated",
                                               "memory_reserved",
                                               "allocated_bytes.all.current",
                                               "reserved_bytes.all.current",
                                               "allocated_bytes.all.allocated",
                                               "allocated_bytes.all.peak",
                                               "torch.cuda.memory_allocated",
                                               "torch.cuda.memory_reserved",
                                               "torch.cuda.max_memory_allocated",
                                               "max_memory_reserved",
                                               "preallocated",
                                               "unreserved",
                                               "allocation",
                                               "allocate",
                                               "alloc_mem",
                                               "allocated memory",
                                               "reserved_mem",
                                               "allocated_memory",
                                               "gpu reserved memory",
                                               "alloc cur",
                                               "alloc_current",
                                               "reserved peak",
                                               "allocated max",
                                               "reserved_cur",
                                               "memory_alloc",
                                               "memoryallocated",
                                               "allocated_memory_current",
                                               "reserved mem cur",
                                               "alloc_memo",
                                               "allocated currentx",
                                               "reserved curr",
                                               "allocated_bytes.all.currents",
                                               "memory_memory_allocated",
                                               "alloccur",
                                               "reservedx",
                                               "allocated_ max",
                                               "allocated  cur",
                                               "reserved_bytes.all",
                                               "'allocated_bytes.all.current'",
                                               "\"reserved_bytes.all.current\"",
                                               "alloc peak",
                                               "reserved max"};
  static constexpr std::string_view kBeforeKeys[] = {"max ",
                                                     "peak ",
                                                     "max_",
                                                     "peak_",
                                                     "peak_gpu_",
                                                     "peak gpu memory ",
                                                     "max_cuda_memory_",
                                                     "max cuda ",
                                                     "maximum ",
                                                     "peaked ",
                                                     "gpu_",
                                                     "cuda ",
                                                     "memory ",
                                                     "max  gpu  ",
                                                     "peak_memory_",
                                                     "max__",
                                                     "xmax ",
                                                     "max-",
                                                     "max gpu cuda memory ",
                                                     "peak mem ",
                                                     "torch.cuda.",
                                                     "nvidia-smi ",
                                                     "gpu 1 ",
                                                     "cuda:2 ",
                                                     "-",
                                                     "_",
                                                     "9",
                                                     "x",
                                                     "."};
  static constexpr std::string_view kCalls[] = {"(0)",        "(1)",
                                                "()",         "( 2 )",
                                                "('cuda:1')", "(\"cuda:3\")",
                                                "(device=2)", "(device = 7 )",
                                                "(cuda:0)",   "(1234567)",
                                                "(123456)",   "(99999999999999999999)",
                                                "('')",       "(')",
                                                "(device=)",  "(x)",
                                                "(",          "(0",
                                                "cuda:1)",    "( '4' )",
                                                "(device 2)", "(devices=1)",
                                                "('cuda:')",  "(cuda:1'\")",
                                                "(\t3\t)",    "( device=  'cuda:5' )",
                                                "((0))",      "(0)(1)"};
  static constexpr std::string_view kDevices[] = {
      "cuda:",  "cuda:1", "cuda:12", "cuda:1234567", "gpu",      "gpu0",       "gpu 3",       "gpu-2", "gpu--1",
      "gpu_1",  "gpu1x",  "[gpu 5]", "xgpu 2",       "cuda:3x",  "gpu 123456", "gpu 1234567", "gpu-",  "gpu ",
      "_gpu 4", "2gpu 4", "gpu  1",  "cuda: 1",      "cuda:0:1", "(gpu 2)",    "gpu-0,",      "gpus 3"};
  static constexpr std::string_view kUnits[] = {"",       "k",    "m",   "g",    "t",   "kb",        "mb",    "gb",
                                                "tb",     "kib",  "mib", "gib",  "tib", "b",         "bytes", "byte",
                                                "bytesx", "kibx", "kx",  "mbs",  "ib",  "gigabytes", "mi",    "gi",
                                                "kbit",   "b/s",  "gb)", "mib|", "g_",  "x",         "e",     "mib2"};
  static constexpr std::string_view kLineUnits[] = {
      "(mb)",     "[mib]",  "in gb",  "in gbs",   "( gib )", "[ kb]",       "(bytes)", "(mbx)",
      "in  mb",   "(mb",    "[gib)",  "(g)",      "xin mb",  "(t)",         "(kib ",   "in\tmb",
      "(\tmb\t)", "in mb.", "in mb_", "[bytes ]", "(b)",     "(gigabytes)", "in"};
  static constexpr std::string_view kWords[] = {"nvidia-smi",
                                                "nvidia-smi gpu-0 memory (mb)",
                                                "nvidia-smi gpu 1 memory",
                                                "memory",
                                                "memory (mb)",
                                                "memory:",
                                                "memory_",
                                                "memory1",
                                                "xmemory",
                                                "memory-used",
                                                "used",
                                                "step",
                                                "iter",
                                                "loss",
                                                "epoch",
                                                "lr",
                                                "summary",
                                                "memory summary, device id ",
                                                "pytorch cuda memory summary, device id 1",
                                                "memory summary, device id 1234567",
                                                "memory summary, device id 3x",
                                                "memory summary, device id",
                                                "|",
                                                "cur usage",
                                                "current",
                                                "peak",
                                                "max",
                                                "mem",
                                                "nvidia-smi memory",
                                                "smi",
                                                "nvidia-smi-memory",
                                                "device",
                                                "device=",
                                                "bytes",
                                                "workers",
                                                "from large pool"};
  static constexpr std::string_view kOdd[] = {"\xc3\xa9",     "\xff", "\x80", "\xe2\x80\x94", std::string_view("\0", 1),
                                              "\xe9t\xe9",    "\t",   "\v",   "\f",           "\r",
                                              "\xc2\xa0",     "\xb5", "'",    "\"",           "\\",
                                              "\xc3\xa9gpu 2"};
  static constexpr std::string_view kSeparators[] = {
      " ",  " ",  " ",  "",   "",  ":",  ": ", "=",    " = ", "|", " | ", ",", ", ", "_", "-",        ".",   "\t",
      "\v", "\f", "\r", "  ", "'", "\"", "':", "\": ", "/",   ";", "(",   ")", "[",  "]", "\xc3\xa9", "\x80"};
  static constexpr std::string_view kValueSeparators[] = {" ",   "",     ": ",  ":",   "=",   " = ", "\t", "  ",
                                                          ": '", "\": ", "': ", " | ", "=\"", ":\v", " :", "-"};
  static constexpr std::string_view kSpaces[] = {" ", "  ", "\t", " \v"};
  static constexpr std::string_view kExponents[] = {"e", "e+", "e-", "e+0", "e"};
  static constexpr std::string_view kLetters[] = {"a", "b", "c", "d", "e", "g", "i", "k", "m", "p",
                                                  "r", "t", "u", "x", "y", "_", "0", "7", "-", "."};

  std::mt19937_64 rng_;
};

TEST(FrameworkLogMatchers, GiveTheRegexParsersResultsOnGeneratedLines) {
  LineGenerator gen(kSeed);
  Compare compare;
  std::string log;
  for (size_t i = 0; i < kGeneratedLines; ++i) {
    const std::string line = gen.Line();
    compare.Line(line);
    log += line;
    log += '\n';
    if ((i + 1) % kLinesPerLog == 0) {
      compare.Log(log, true);
      compare.Head(log);
      log.clear();
    }
  }
  EXPECT_EQ(compare.differences(), 0u) << "of " << compare.texts() << " texts";
  EXPECT_GE(compare.texts(), kGeneratedLines);
}

// Lines that take the expressions' less travelled paths: thousands groups given back, a fraction
// or an exponent left out, a unit that is no unit, digits past six, a cut bracket.
TEST(FrameworkLogMatchers, GiveTheRegexParsersResultsOnNearMisses) {
  const char* lines[] = {"allocated 1,234,5678 mb",
                         "allocated: 12,345,678,90 MiB",
                         "allocated 1,23 gb",
                         "allocated -1,234 kb",
                         "allocated 5.5x",
                         "allocated 5.e3 mb",
                         "allocated 1e5x",
                         "allocated 1e+5 gib",
                         "allocated 1e+ gib",
                         "allocated 3 kibx reserved 4 kib_",
                         "allocated 3kb_ reserved 4bytesx",
                         "allocated 3 b reserved 4 bytes",
                         "allocated 3\v\tmib reserved 4 \x01mib",
                         "nvidia-smi gpu-1 memory 5.5x",
                         "nvidia-smi memory: 12 mibx",
                         "nvidia-smi memory 12 \tgib!",
                         "nvidia-smi xmemory 3 memory_4 memory 5",
                         "nvidia-smi memory\rabc 7.25.3 gb",
                         "gpu 2 nvidia-smi gpu3 memory 4",
                         "memory summary, device id 1234567 allocated 4 mib",
                         "memory summary, device id 12x memory summary, device id 3 ",
                         "(mb allocated 5",
                         "in mb allocated 5",
                         "xin mb allocated 5",
                         "[ gib ]allocated 5",
                         "( bytesx) allocated 5000",
                         "max  allocated 5 gb",
                         "peak_gpu__cuda memory_allocated 5 gb",
                         "maxallocated 5 gb",
                         "max gpu xallocated 5 gb",
                         "torch.cuda.memory_allocated(  device =  'cuda:7'  ) 5 gib",
                         "memory_allocated(1234567) 5 gib",
                         "memory_allocated(cuda:) 5 gib",
                         "allocated(') 5 gib",
                         "allocated('\") 5 gib",
                         "cuda:3 gpu-1234567 gpu 7 allocated 5 gib",
                         "cuda:3gpu 4 allocated 5 gib",
                         "alloc cur(0) 1 gb alloc_current 2 gb alloc_cur 3gb",
                         "allocated_memory_current 5 gb",
                         "allocated mem max 5 gb",
                         "reserved_bytes.all.current_mem 5 gb",
                         "[rank 3 ]: allocated 5 gb rank12| reserved 6 gb device 4 : allocated 7 gb",
                         "xrank 3: device1234567: rank 7 allocated 5 gb",
                         "local_rank= 3 allocated 5 gb rank:12 reserved 6 gb global_rank =7 of 8 allocated 7 gb",
                         "xlocal_rank=3 rank 4of5 allocated 5 gb rank 6 / 1234567 rank 7 /8x allocated 6 gb",
                         "rank=1234567 device:2 rank 3 of 4 | reserved 5 gb ranks=4 rank_=5 allocated 6 gb",
                         "free on device: 1.5 gb allocated 5 gb device=2.x rank: 3.25 reserved 6 gb rank=4. alloc 7 gb",
                         "('allocated_bytes.all.current', 4096) ('reserved', , 5000) (\"alloc\",\" 6 gb)",
                         "allocated (gb): 1.5 reserved [ mib ] 3 alloc (gbx) 4 gb alloc [0] 5 gb alloc (k) 6",
                         "allocated(mb 5 gb reserved [mb) 6 allocated(bytes)7000",
                         "nvidia-smi memory 45% (35000 mib) memory 12.5.3 % 7 gb memory 3%4% 5 memory 6 %x",
                         "nvidia-smi memory 1.%2 memory .5% 9 memory 45\n% 8",
                         "allocated/reserved: 2048/4096 mb alloc / alloc 1.5/2.5.3 reserved/allocated 1/2x",
                         "allocated/reserved 1,024/2 gb allocated/ reserved:'3 / 4 bytesx",
                         "allocated 2048 / 81920 mib reserved 1 /2,048.5gb allocated 7/8 x alloc 9 / 1.k"};
  Compare compare;
  for (const char* line : lines) compare.Everything(line);
  EXPECT_EQ(compare.differences(), 0u) << "of " << compare.texts() << " texts";
}

// The string literals of a C++ source, adjacent ones joined, escapes (\n, \", \\, \t) read.
std::vector<std::string> StringLiterals(const std::string& source) {
  std::vector<std::string> out;
  bool joining = false;
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      i = source.find('\n', i);
      if (i == std::string::npos) break;
      continue;
    }
    if (c == '\'') {  // a character literal: skipped
      i += source[i + 1] == '\\' ? 3 : 2;
      continue;
    }
    if (c != '"') {
      if (c != ' ' && c != '\n') joining = false;
      continue;
    }
    std::string literal;
    for (++i; i < source.size() && source[i] != '"'; ++i) {
      if (source[i] != '\\') {
        literal += source[i];
        continue;
      }
      const char e = source[++i];
      literal += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    }
    if (joining) {
      out.back() += literal;
    } else {
      out.push_back(literal);
    }
    joining = true;
  }
  return out;
}

TEST(FrameworkLogMatchers, GiveTheRegexParsersResultsOnTheUnitTestsStrings) {
  const std::string path = std::string(VRAMWATCH_SOURCE_DIR) + "/src/sources/trace/framework_log_test.cpp";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream source;
  source << in.rdbuf();
  const std::vector<std::string> literals = StringLiterals(source.str());
  ASSERT_GT(literals.size(), 100u) << "the literals of " << path;
  Compare compare;
  for (const std::string& s : literals) {
    compare.Everything(s);
    compare.Everything(s + "\n");
  }
  EXPECT_EQ(compare.differences(), 0u) << "of " << compare.texts() << " texts";
}

TEST(FrameworkLogMatchers, GiveTheRegexParsersResultsOnTheRealLogs) {
  const char* files[] = {"issue_pytorch115255_allocated_creep.log", "issue_returnn1478_alloc_cur_creep.log",
                         "issue_nvdiffrast23_per_iter_torch_vs_smi.log"};
  Compare compare;
  for (const char* file : files) {
    const std::string path = std::string(VRAMWATCH_SHARED_DATA) + "/" + file;
    ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing; configure with -DVRAMWATCH_SHARED_DATA=<dir>";
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ASSERT_FALSE(text.str().empty()) << path;
    ASSERT_TRUE(ParseFrameworkLog(text.str(), file).ok()) << path;
    compare.Everything(text.str());
  }
  EXPECT_EQ(compare.differences(), 0u) << "of " << compare.texts() << " texts";
}

}  // namespace
}  // namespace vw::trace
