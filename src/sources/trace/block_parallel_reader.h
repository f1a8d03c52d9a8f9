// BlockParallelReader: reads a regular nvidia-smi --query-gpu CSV file on several threads and hands
// the records out in file order, exactly as the one-thread reader would (same records, same
// lenient skip count and examples, same first error with the same FILE:LINE:COL message).
//
// How: the file is cut into blocks of about `block_bytes` at line boundaries (LocateBlock). Worker
// threads pread() a block into a buffer and parse it with a QueryCsvBlockParser started from the
// carry (column layout, last `date` time) of the latest block already handed out. The caller
// takes the blocks in order and checks each against the true carry at its start: a block that
// read the layout it started with must have started with the right one. A block that fails the
// check, ends in an error, holds a row without a timestamp (its time depends on earlier rows), a
// line longer than kBlockSlack across its end, or could not be read in full (the file shrank)
// makes the reader hand the rest of the file, from that block's first line, to one sequential
// parser (on its own thread) that starts from the true carry, line number and skip counts.
//
// The file is read up to its size when opened. pread() into buffers, never a mapping: a file
// truncated meanwhile just ends early instead of raising SIGBUS.
//
// Workers parse a block with QueryCsvBlockParser::ParseBlock (plain rows of the GPU expected next
// straight into compact samples) and hand it over as compact samples and the block's GPU
// identities (compact_sample.h), which NextBatch() gives out as they are; NextRecord() and the copying interfaces
// rebuild the TraceRecord from them. The rest of a file after a fall-back is handed out the same way.
//
// Memory: at most threads + 14 blocks are in flight (each block's compact samples, about 56 bytes a
// record), plus one read buffer of block_bytes + kBlockSlack per worker, whatever the file size.
//
// Threading: one caller thread uses this object; the workers start on the first read and are
// stopped and joined by the destructor. skipped_count(), skipped_examples() and has_zone() are as
// of the last block handed out (exact once the end or an error was reached).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "sources/trace/compact_sample.h"
#include "sources/trace/pipelined_reader.h"
#include "sources/trace/trace_formats.h"
#include "sources/trace/trace_reader.h"

namespace vw::trace {

// Longest stretch read past a block's nominal end to find the end of its last line (bytes).
inline constexpr size_t kBlockSlack = 64 << 10;

struct BlockParallelOptions {
  size_t threads = 2;              // parsing threads besides the caller's (at least 1)
  size_t block_bytes = 512 << 10;  // nominal block size (bytes; used within 64 B .. 64 MiB)
};

// Where the lines of block `index` lie in a file of `file_size` bytes: block i holds the lines that
// start at a byte offset in [i × block_bytes, (i + 1) × block_bytes) (block 0 starts at `first`,
// after a byte-order mark). `text` holds the file's bytes from `text_offset` on; it must start at or
// before the byte in front of the block (index × block_bytes − 1) and reach the file's end or
// kBlockSlack past the block's nominal end.
struct BlockSpan {
  uint64_t begin = 0;  // offset of the block's first line; == end when no line starts in the block
  uint64_t end = 0;    // one past the '\n' ending its last line (the file size for an unterminated last line)
  bool ok = false;     // false: the end of the last line was not within `text`
};
BlockSpan LocateBlock(std::string_view text, uint64_t text_offset, uint64_t index, uint64_t block_bytes, uint64_t first,
                      uint64_t file_size);

class BlockParallelReader : public TraceReader {
 public:
  // Opens `path` for block-parallel reading when it qualifies: a regular, non-empty UTF-8 file in
  // the --query-gpu format (detected, or given by options.format). Returns nullptr (not an error)
  // when it does not: read it with OpenTrace() then. Errors are those OpenTrace() would give.
  static Result<std::unique_ptr<BlockParallelReader>> Open(const std::string& path, const TraceOptions& options,
                                                           const BlockParallelOptions& parallel);
  ~BlockParallelReader() override;
  BlockParallelReader(const BlockParallelReader&) = delete;
  BlockParallelReader& operator=(const BlockParallelReader&) = delete;

  // The next records in file order (count > 0; valid until the next call); false at the end of
  // the file. An error comes after every record before it. A reader is read either with
  // NextBatch() or with the record interfaces below, not both.
  Result<bool> NextBatch(SampleBatch* out);

  // The next record, valid until the next call; nullptr at the end of the file.
  Result<const TraceRecord*> NextRecord();

  Result<std::optional<TraceRecord>> Next() override;   // copies the record
  Result<bool> NextInto(TraceRecord* record) override;  // copies the record
  TraceFormat format() const override { return TraceFormat::kQueryCsv; }
  uint64_t bytes_read() const override;
  uint64_t bytes_total() const override { return size_; }
  size_t skipped_count() const override;
  const std::vector<SkippedLine>& skipped_examples() const override;
  bool synthetic_time() const override;
  bool has_zone() const override;
  uint64_t unterminated_tail_bytes() const override { return tail_left_out_; }

  // Blocks parsed in parallel and handed out, and whether (and from which byte) the rest of the
  // file went to the sequential parser (tests, diagnostics).
  uint64_t parallel_blocks() const { return next_block_; }
  bool fell_back() const { return tail_ != nullptr; }
  // Records of the blocks handed out that took the compact scan (QueryCsvBlockParser::ParseBlock).
  uint64_t compact_rows() const { return compact_rows_; }
  uint64_t fallback_offset() const { return expected_begin_; }

 private:
  struct Slot {
    std::vector<CompactSample> samples;  // reused; the first `count` are this block's
    GpuTable gpus;                       // the GPUs of those samples
    // Input.
    uint64_t index = 0;
    QueryCsvCarry start;
    // Result.
    bool done = false;
    bool regular = false;  // parsed to its end without error (see the class comment)
    BlockSpan span;
    size_t count = 0;
    size_t compact = 0;  // of them, rows that took the compact scan
    size_t lines = 0;
    QueryCsvCarry end;
    QueryCsvBlockUse use;
    size_t skipped_count = 0;
    std::vector<SkippedLine> skipped;
    bool has_zone = false;
    RowClock row_clock = RowClock::kNone;
    size_t row_clock_line = 0;  // of its first row timestamp, within the block
  };

  BlockParallelReader(int fd, std::string display, TraceOptions options, const BlockParallelOptions& parallel,
                      uint64_t size, uint64_t first);
  void Work();
  // Parses block s.index, reading it into the worker's `buf` (block_bytes + kBlockSlack + 1 bytes
  // and a page, see Work()) and each row into one of its `scratch` records (kScratchRecords).
  void Parse(Slot& s, char* buf, TraceRecord* scratch) const;
  // Fills the tail batch from the sequential parser (a query-csv reader: no process lists).
  Result<bool> NextTailBatch(SampleBatch* out);
  void Dispatch(uint64_t index);
  Slot& WaitFor(uint64_t index);
  Status StartTail();
  void StopWorkers();

  int fd_;
  std::string display_;
  TraceOptions options_;
  size_t threads_;
  uint64_t block_bytes_;
  uint64_t size_;               // the bytes read: the file up to its last line end
  uint64_t tail_left_out_ = 0;  // the bytes after it (a last line without its end)
  uint64_t first_;              // offset of the first line (3 after a UTF-8 byte-order mark)
  uint64_t blocks_;

  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Slot*> queue_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
  std::vector<Slot> slots_;

  // Caller side: the state of the file at the start of block next_block_.
  uint64_t next_block_ = 0;
  uint64_t dispatched_ = 0;  // blocks handed to the workers so far
  QueryCsvCarry carry_;
  uint64_t expected_begin_ = 0;
  size_t lines_before_ = 0;
  uint64_t records_ = 0;
  uint64_t compact_rows_ = 0;
  size_t skipped_count_ = 0;
  std::vector<SkippedLine> skipped_;
  bool has_zone_ = false;
  RowClock row_clock_ = RowClock::kNone;  // of the blocks handed out (a block of the other kind: the tail)
  size_t row_clock_line_ = 0;             // the line of their first row timestamp
  bool done_ = false;
  Status error_;
  std::unique_ptr<PipelinedTraceReader> tail_;
  // Batches of the sequential parser's records after a fall-back.
  std::vector<CompactSample> tail_samples_;
  GpuTable tail_gpus_;
  Status tail_error_;  // met after the records of the batch last handed out
  // NextRecord() on top of NextBatch().
  SampleBatch batch_;
  size_t batch_pos_ = 0;
  TraceRecord record_;
};

}  // namespace vw::trace
