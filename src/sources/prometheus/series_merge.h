// The series of one GPU made one (MergeSeriesOfOneGpu) and each sample read once
// (KeepEachSampleOnce, with ParseMatrixPoints) for the Prometheus reader (prometheus_reader.h). Times are seconds since
// the epoch. Plain functions, no state.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sources/prometheus/prometheus_series.h"

namespace vw::prometheus {

// Prometheus' default look-back (seconds): a range query goes on reading a series this long after
// its last sample, so series that follow one another overlap by up to this much.
inline constexpr double kLookBackSeconds = 300;

// Series of one GPU (key, UUID, PID and unit alike) that follow one another, holding values at the
// same times for at most `overlap_s` seconds at a stretch, made one: points in time order, at a
// time held by several the one of the series that reaches furthest; labels of that series. Series
// of one GPU that hold values together for longer stay apart, the labels that differ between them
// added to their keys ("node-1/3/pod=train-b"). GPUs of one key with different UUIDs (a card
// replaced) get the UUID in their key ("node-1/3/GPU-abc").
std::vector<PrometheusSeries> MergeSeriesOfOneGpu(std::vector<PrometheusSeries> series, double overlap_s);

// A matrix answer's points for each series (LabelsWithoutName): (time, value) in time order. For
// `timestamp(Q)` over a range the value is the time of the sample each step read.
using MatrixPoints = std::map<std::string, std::vector<std::pair<double, double>>>;

// Empty when the body cannot be read; points that are not [time, "number"] are left out.
MatrixPoints ParseMatrixPoints(const std::string& body);

// Each sample of `s` (read from Q over a range) once, at its own time: a step of a range query
// reads the latest sample at or before it, so a step shorter than the scrape interval reads one
// sample several times (a narrower rate interval than the data allow). `times` says which sample
// each step read; `s.implausible` then counts each such sample once too. False when `times` has
// no series of `s`'s labels (`s` is left as read).
bool KeepEachSampleOnce(PrometheusSeries& s, const MatrixPoints& times);

}  // namespace vw::prometheus
