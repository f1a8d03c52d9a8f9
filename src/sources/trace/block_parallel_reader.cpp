#include "sources/trace/block_parallel_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>

#include "sources/trace/line_reader.h"
#include "sources/trace/line_trace_reader.h"

namespace vw::trace {
namespace {

constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
constexpr size_t kDetectBytes = 64 * 1024;  // as OpenTrace() peeks for format detection
constexpr uint64_t kMinBlockBytes = 64;
constexpr uint64_t kMaxBlockBytes = 64 << 20;
constexpr size_t kTailBatch = 1024;     // records per batch after a fall-back
constexpr size_t kScratchRecords = 33;  // per worker: one per GPU table entry searched, and a spare
constexpr uint64_t kPageBytes = 4096;
// Blocks in flight besides one per worker: enough for the workers to run about 5 ms ahead of the
// caller (a block takes a worker about 0.35 ms). When the caller shares a core with a worker and
// the scheduler gives that worker a long slice, a shallow ring (2 spare blocks) let the other core
// idle once its worker had parsed every block handed out: 30-40 ms per GB on 2 cores, against
// 3-17 ms with 14 (perf sched).
constexpr size_t kSpareSlots = 14;
constexpr uint64_t kBlockProbe = 4 << 10;  // bytes read past a block's end at first (see Parse)

// Offset of the first '\n' at a file offset in [from, to) within `text` (which starts at file
// offset `base`), or kNone.
uint64_t FindNewline(std::string_view text, uint64_t base, uint64_t from, uint64_t to) {
  from = std::max(from, base);
  to = std::min(to, base + text.size());
  if (from >= to) return kNone;
  const char* start = text.data() + (from - base);
  const auto* nl = static_cast<const char*>(std::memchr(start, '\n', to - from));
  return nl == nullptr ? kNone : from + static_cast<uint64_t>(nl - start);
}

// Reads up to `n` bytes at `offset`; returns the count read (short only at the end of the file) or -1.
ssize_t ReadFully(int fd, char* out, size_t n, uint64_t offset) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd, out + got, n - got, static_cast<off_t>(offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -1;
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

BlockSpan LocateBlock(std::string_view text, uint64_t text_offset, uint64_t index, uint64_t block_bytes, uint64_t first,
                      uint64_t file_size) {
  BlockSpan span;
  const uint64_t nominal = index * block_bytes;
  const uint64_t nominal_end = std::min(nominal + block_bytes, file_size);
  if (index == 0) {
    span.begin = first;
  } else {
    // A line starts at p + 1 in [nominal, nominal_end) when a '\n' sits at p.
    const uint64_t nl = FindNewline(text, text_offset, nominal - 1, nominal_end - 1);
    if (nl == kNone) {
      span.begin = span.end = nominal_end;
      span.ok = true;
      return span;
    }
    span.begin = nl + 1;
  }
  if (nominal_end >= file_size) {
    span.end = file_size;
    span.ok = span.begin <= span.end;
    return span;
  }
  const uint64_t nl = FindNewline(text, text_offset, nominal_end - 1, file_size);
  if (nl != kNone) {
    span.end = nl + 1;
    span.ok = true;
  } else if (text_offset + text.size() >= file_size) {
    span.end = file_size;  // the last line, without a '\n'
    span.ok = true;
  }
  return span;
}

Result<std::unique_ptr<BlockParallelReader>> BlockParallelReader::Open(const std::string& path,
                                                                       const TraceOptions& options,
                                                                       const BlockParallelOptions& parallel) {
  std::unique_ptr<BlockParallelReader> none;
  if (path == "-") return none;
  if (options.format != TraceFormat::kAuto && options.format != TraceFormat::kQueryCsv) return none;
  // Only a regular file is split into blocks. A FIFO is not even opened here: opening it would take
  // its writer, and what the writer sent would be lost to the sequential reader that opens it next.
  struct stat path_st {};
  if (::stat(path.c_str(), &path_st) != 0 || !S_ISREG(path_st.st_mode)) return none;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return none;  // OpenTrace() reports it
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) {
    ::close(fd);
    return none;
  }
  // A last line without a line end (the file is still being written) is left out, as the
  // sequential reader leaves it out (line_reader.h).
  const uint64_t size = CompleteLinesLength(fd, static_cast<uint64_t>(st.st_size));
  const uint64_t tail_left_out = static_cast<uint64_t>(st.st_size) - size;
  std::string head(std::min<uint64_t>(size, kDetectBytes + 3), '\0');
  const ssize_t got = ReadFully(fd, head.data(), head.size(), 0);
  if (got < 4 && static_cast<uint64_t>(got) != size) {
    ::close(fd);
    return none;
  }
  head.resize(static_cast<size_t>(got));
  const auto* b = reinterpret_cast<const unsigned char*>(head.data());
  const size_t n = head.size();
  // UTF-16 needs decoding: the sequential reader does that.
  const bool utf16 = (n >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || (b[0] == 0xFE && b[1] == 0xFF))) ||
                     (n >= 4 && b[0] != 0 && b[1] == 0 && b[2] != 0 && b[3] == 0) ||
                     (n >= 4 && b[0] == 0 && b[1] != 0 && b[2] == 0 && b[3] != 0);
  const uint64_t first = n >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF ? 3 : 0;
  bool query_csv = !utf16 && size > first;
  if (query_csv && options.format == TraceFormat::kAuto) {
    const std::string_view text = std::string_view(head).substr(first, kDetectBytes);
    auto detected = DetectTraceFormat(text, size - first < kDetectBytes, path);
    query_csv = detected.ok() && *detected == TraceFormat::kQueryCsv;
  }
  if (!query_csv) {
    ::close(fd);
    return none;
  }
  std::unique_ptr<BlockParallelReader> reader(new BlockParallelReader(fd, path, options, parallel, size, first));
  reader->tail_left_out_ = tail_left_out;
  return reader;
}

BlockParallelReader::BlockParallelReader(int fd, std::string display, TraceOptions options,
                                         const BlockParallelOptions& parallel, uint64_t size, uint64_t first)
    : fd_(fd),
      display_(std::move(display)),
      options_(std::move(options)),
      threads_(std::max<size_t>(parallel.threads, 1)),
      block_bytes_(std::clamp<uint64_t>(parallel.block_bytes, kMinBlockBytes, kMaxBlockBytes)),
      size_(size),
      first_(first),
      blocks_((size + block_bytes_ - 1) / block_bytes_),
      slots_(threads_ + kSpareSlots),
      expected_begin_(first) {}

BlockParallelReader::~BlockParallelReader() {
  StopWorkers();
  ::close(fd_);
}

void BlockParallelReader::StopWorkers() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void BlockParallelReader::Work() {
  // One read buffer and the scratch records per worker, reused for every block it parses: they stay
  // in this core's cache, and a slot keeps only the compact samples the caller reads. kPageBytes
  // more, so that each block can be read to an address 2 KiB off its file offset (see Parse).
  std::unique_ptr<char[]> buf(new char[block_bytes_ + kBlockSlack + 1 + kPageBytes]);
  std::vector<TraceRecord> scratch(kScratchRecords);
  for (;;) {
    Slot* s;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      s = queue_.front();
      queue_.pop_front();
    }
    Parse(*s, buf.get(), scratch.data());
    {
      std::lock_guard<std::mutex> lock(mu_);
      s->done = true;
    }
    done_cv_.notify_all();
  }
}

void BlockParallelReader::Parse(Slot& s, char* buf, TraceRecord* scratch) const {
  s.regular = false;
  s.count = 0;
  s.compact = 0;
  s.gpus.Clear();
  s.lines = 0;
  s.skipped_count = 0;
  s.skipped.clear();
  s.has_zone = false;
  s.row_clock = RowClock::kNone;
  s.row_clock_line = 0;
  s.use = QueryCsvBlockUse{};
  s.end = s.start;
  const uint64_t nominal = s.index * block_bytes_;
  const uint64_t from = s.index == 0 ? 0 : nominal - 1;
  // The block and a few KiB past its end, where its last line almost always ends; the rest of the
  // slack only when it does not (copying the whole slack for every block cost 11 % more reading).
  const uint64_t to = std::min(size_, nominal + block_bytes_ + kBlockSlack);
  const uint64_t probe = std::min(to, nominal + block_bytes_ + kBlockProbe);
  // The kernel copies the file into `buf` fastest when the destination is well apart from the
  // source within a page: at a distance of a few bytes modulo 4 KiB, a store and a later load of
  // the copy look alike to the memory pipeline (4K aliasing) and the copy took twice as long.
  buf += (kPageBytes / 2 + from - reinterpret_cast<uintptr_t>(buf)) % kPageBytes;
  const ssize_t got = ReadFully(fd_, buf, probe - from, from);
  if (got < 0 || static_cast<uint64_t>(got) != probe - from) return;  // an I/O error, or the file shrank
  s.span = LocateBlock(std::string_view(buf, probe - from), from, s.index, block_bytes_, first_, size_);
  if (!s.span.ok && probe < to) {
    const ssize_t more = ReadFully(fd_, buf + (probe - from), to - probe, probe);
    if (more < 0 || static_cast<uint64_t>(more) != to - probe) return;
    s.span = LocateBlock(std::string_view(buf, to - from), from, s.index, block_bytes_, first_, size_);
  }
  if (!s.span.ok) return;
  const std::string_view text(buf, s.span.end - from);
  if (s.span.begin == s.span.end) {
    s.regular = true;
    return;
  }
  auto parser = NewQueryCsvBlockParser(
      LineReader::OverText(text.substr(s.span.begin - from, s.span.end - s.span.begin)), display_, options_, s.start);
  // A row that does not take the compact scan goes into the scratch record of the GPU expected
  // next, which usually holds that GPU's identity already: the parser then finds its strings equal
  // instead of copying them, and Intern() compares strings that were not just written (no
  // store-forwarding stalls).
  CompactBlockOutput out{&s.gpus, &s.samples, 0, scratch, kScratchRecords};
  if (!parser->ParseBlock(&out).ok()) return;
  s.count = out.count;
  s.compact = parser->compact_rows();
  s.regular = true;
  s.lines = parser->lines_read();
  s.end = parser->carry();
  s.use = parser->use();
  s.skipped_count = parser->block_skipped_count();
  s.skipped = parser->block_skipped_examples();
  s.has_zone = parser->block_has_zone();
  s.row_clock = parser->block_row_clock();
  s.row_clock_line = parser->block_row_clock_line();
}

void BlockParallelReader::Dispatch(uint64_t index) {
  if (workers_.empty()) {
    for (size_t i = 0; i < threads_; ++i) workers_.emplace_back([this] { Work(); });
  }
  Slot& s = slots_[index % slots_.size()];
  s.index = index;
  s.start = carry_;
  {
    std::lock_guard<std::mutex> lock(mu_);
    s.done = false;
    queue_.push_back(&s);
  }
  work_cv_.notify_one();
}

BlockParallelReader::Slot& BlockParallelReader::WaitFor(uint64_t index) {
  Slot& s = slots_[index % slots_.size()];
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return s.done; });
  return s;
}

Status BlockParallelReader::StartTail() {
  StopWorkers();
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return FromErrno(errno, "dup trace").WithContext(display_);
  auto in = LineReader::FromFd(fd, expected_begin_, lines_before_, size_);
  if (!in.ok()) return in.status().WithContext(display_);
  QueryCsvResume from{carry_, records_, skipped_count_, skipped_, has_zone_, row_clock_, row_clock_line_};
  tail_ = std::make_unique<PipelinedTraceReader>(ResumeQueryCsvReader(std::move(*in), display_, options_, from));
  return Status::Ok();
}

Result<bool> BlockParallelReader::NextTailBatch(SampleBatch* out) {
  if (!tail_error_.ok()) return tail_error_;
  tail_gpus_.Clear();
  size_t count = 0;
  while (count < kTailBatch && tail_gpus_.size() < GpuTable::kSearched) {
    auto next = tail_->NextRecord();
    if (!next.ok()) {
      tail_error_ = next.status();
      break;
    }
    if (*next == nullptr) break;
    const TraceRecord& rec = **next;
    if (count == tail_samples_.size()) tail_samples_.emplace_back();
    ToCompact(rec.sample, tail_gpus_.Intern(rec.gpu), &tail_samples_[count++]);
  }
  if (count == 0) {
    if (!tail_error_.ok()) return tail_error_;
    return false;  // the tail reader answers the same again after its end
  }
  *out = SampleBatch{tail_samples_.data(), count, tail_gpus_.data(), tail_gpus_.size()};
  return true;
}

Result<bool> BlockParallelReader::NextBatch(SampleBatch* out) {
  const uint64_t ahead = slots_.size();
  for (;;) {
    if (tail_) return NextTailBatch(out);
    if (done_) {
      if (!error_.ok()) return error_;
      return false;
    }
    if (next_block_ == blocks_) {
      done_ = true;
      if (records_ == 0) error_ = NoSamplesError(display_, skipped_count_);
      continue;
    }
    // Keep the ring busy: block 0 alone first, so that the others start from its layout.
    const uint64_t limit = next_block_ == 0 ? 1 : std::min(blocks_, next_block_ + ahead);
    while (dispatched_ < limit) Dispatch(dispatched_++);
    Slot& s = WaitFor(next_block_);
    const bool empty = s.span.begin == s.span.end;
    if (!s.regular || (!empty && s.span.begin != expected_begin_) ||
        (s.use.layout_read && !s.start.SameLayout(carry_)) ||
        // Rows with a time zone after rows without (or the reverse): the one-thread reader names the line.
        (s.row_clock != RowClock::kNone && row_clock_ != RowClock::kNone && s.row_clock != row_clock_)) {
      Status started = StartTail();
      if (!started.ok()) {
        done_ = true;
        error_ = started;
      }
      continue;
    }
    ++next_block_;
    if (empty) continue;
    if (s.use.layout_set) {
      carry_.header_text = s.end.header_text;
      carry_.have_columns = s.end.have_columns;
      carry_.columns_from_options = s.end.columns_from_options;
    }
    if (s.use.time_set) carry_.block_time = s.end.block_time;
    for (const SkippedLine& k : s.skipped) {
      if (skipped_.size() >= kMaxSkippedExamples) break;
      skipped_.push_back(SkippedLine{k.line + lines_before_, k.reason});
    }
    skipped_count_ += s.skipped_count;
    has_zone_ = has_zone_ || s.has_zone;
    if (row_clock_ == RowClock::kNone) {
      row_clock_ = s.row_clock;
      row_clock_line_ = lines_before_ + s.row_clock_line;
    }
    lines_before_ += s.lines;
    expected_begin_ = s.span.end;
    records_ += s.count;
    compact_rows_ += s.compact;
    // The other slots take the blocks after this one, started from the carry just learnt; the slot
    // of the block handed out before this one (the caller is done with it) takes the last of them.
    while (dispatched_ < std::min(blocks_, next_block_ - 1 + ahead)) Dispatch(dispatched_++);
    if (s.count == 0) continue;
    *out = SampleBatch{s.samples.data(), s.count, s.gpus.data(), s.gpus.size()};
    return true;
  }
}

Result<const TraceRecord*> BlockParallelReader::NextRecord() {
  while (batch_pos_ == batch_.count) {
    batch_pos_ = 0;
    batch_.count = 0;
    auto more = NextBatch(&batch_);
    if (!more.ok()) return more.status();
    if (!*more) return static_cast<const TraceRecord*>(nullptr);
  }
  const CompactSample& c = batch_.samples[batch_pos_++];
  const GpuIdentity& gpu = batch_.gpus[c.gpu];
  record_.gpu.key.assign(gpu.key);
  record_.gpu.index = gpu.index;
  record_.gpu.uuid.assign(gpu.uuid);
  record_.gpu.pci_bus_id.assign(gpu.pci_bus_id);
  record_.gpu.name.assign(gpu.name);
  FromCompact(c, &record_.sample);
  return static_cast<const TraceRecord*>(&record_);
}

Result<std::optional<TraceRecord>> BlockParallelReader::Next() {
  auto r = NextRecord();
  if (!r.ok()) return r.status();
  if (*r == nullptr) return std::optional<TraceRecord>();
  return std::optional<TraceRecord>(**r);
}

Result<bool> BlockParallelReader::NextInto(TraceRecord* record) {
  auto r = NextRecord();
  if (!r.ok()) return r.status();
  if (*r == nullptr) return false;
  *record = **r;
  return true;
}

uint64_t BlockParallelReader::bytes_read() const {
  return tail_ ? tail_->bytes_read() : expected_begin_;
}

size_t BlockParallelReader::skipped_count() const {
  return tail_ ? tail_->skipped_count() : skipped_count_;
}

const std::vector<SkippedLine>& BlockParallelReader::skipped_examples() const {
  return tail_ ? tail_->skipped_examples() : skipped_;
}

bool BlockParallelReader::synthetic_time() const {
  return tail_ ? tail_->synthetic_time() : false;
}

bool BlockParallelReader::has_zone() const {
  return tail_ ? tail_->has_zone() : has_zone_;
}

}  // namespace vw::trace
