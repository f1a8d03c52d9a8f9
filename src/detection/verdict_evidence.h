// Verdict evidence: the words of the leak engine's evidence (Assessment::evidence) and the runway of
// a leak verdict. How a sentence names sizes, rates, p-values, moments and the bucket width; a
// window's trend and its rises per third; why a window that grew is no leak; a departed holder; a
// load's cycle; and the time to OOM (AddRunway). docs/detection.md, "Evidence sentences". Internal to
// the engine's verdict.
//
// Units: seconds, bytes, bytes/second. Pure functions except AddRunway (which fills in the
// Assessment it is given), thread-safe.
#pragma once

#include <string>
#include <vector>

#include "detection/growth_window.h"
#include "detection/leak_engine.h"
#include "detection/oscillation.h"
#include "detection/window_choice.h"

namespace vw::detection {

// "1-minute", "30-second", "2-hour": how the evidence names the bucket width.
std::string BucketWords(double w);

// A p-value as the evidence writes it: "p=0.012", or "p<0.001".
std::string PText(double p);

// A size with its sign: "+1.2 GiB", "-64 MiB" (core/units.h).
std::string Signed(double bytes);

// A moment as the evidence names it (EngineConfig::evidence_times): "+1h 5m" from `start`, "t+1h 5m"
// (the time itself, on a trace without a clock), or the clock time, "2026-11-30 02:15 UTC" (or
// without the zone for a wall clock).
std::string At(double t, double start, EngineConfig::EvidenceTimes style);

// A rate in bytes/second as the evidence writes it: "150 MiB/h" (core/units.h).
std::string Rate(double bps);

// "sixth" for 6: the name of one of n equal parts.
std::string PartName(int n);

// The rises per third that the keeps-going tests read (each third's rate between the levels'
// centres, GrowthWindow::third_rate_bps), over a third of `seconds`: why a window failed is told
// with the figures that failed it.
std::string TestedThirdsText(const GrowthWindow& w, double seconds);

// The rises per third of a window that passed the keeps-going tests: the reading figures
// (ThirdsText) when each is a rise; else, under a load's swings, where a level at a third's end
// fell while the medians the test read around it rose, the tested figures, saying so.
std::string KeptRisingText(const GrowthWindow& w, double seconds);

// The sentence "the floor rose by +X over the last S (Mann–Kendall z=..., p=... on the 1-minute floor)"
// of window `w` on a floor of buckets `bucket_s` wide (seconds).
// `block_s` > 0: the test ran on block means of the cycle-free floor.
// `tested`: the rise is the sum of the thirds the keeps-going test read (TestedThirdsText), for a
// sentence that goes on to name them; else the reading figure (RisesOf).
std::string TrendSentence(const Window& w, double bucket_s, double block_s = 0, bool tested = false);

// How a why-not sentence ends: growth that came late is not called settling.
std::string NotALeak(const GrowthWindow& w);

// Whether WhyNot names the window's rises per third.
bool WhyNotNamesThirds(const GrowthWindow& w);

// Why a window with real growth is not a leak, with its numbers: the first test it failed, told
// with the figures that failed it (`seconds`: the window's length; `c`: the thresholds).
std::string WhyNot(const GrowthWindow& w, double seconds, const EngineConfig& c);

// Why a settling verdict is no leak, from its sentence of the form "<trend>, but <why>: <ending>."
// (the last such; a sentence on when the floor last stepped up may follow it): the <why>, or a
// generic clause when there is none.
std::string WhyOf(const std::vector<std::string>& evidence);

// What departed holders explain (a.departures_explained > 0, a.last_departed set): the last one by
// PID when known, the span in which it left, what it held, and the fall taken off the samples
// before it. A span of under a minute is one moment.
std::string DepartureSentence(const Assessment& a, EngineConfig::EvidenceTimes style);

// "The load oscillates with a period of about 20m 0s (1.5 GiB from trough to peak)" (no full stop).
std::string CycleSentence(const Oscillation& o);

// Time to OOM of a leak verdict (its rate set): (capacity − recent peak) / rate, with its range.
// Sets a's tto_* and adds the sentence that states them (or one saying the capacity is unknown).
void AddRunway(Assessment& a);

}  // namespace vw::detection
