// Figures of one measured window: throughput and latency percentiles (nearest rank), in the units the report prints.

export interface Summary {
  /** Successful operations in the measured window. */
  count: number;
  seconds: number;
  /** count / seconds. */
  perSecond: number;
  /** Latency percentiles in ms; NaN when nothing was measured. */
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export function summarize(latenciesMs: number[], seconds: number): Summary {
  const sorted = Float64Array.from(latenciesMs).sort();
  const values = Array.from(sorted);
  return {
    count: values.length,
    seconds,
    perSecond: seconds > 0 ? values.length / seconds : 0,
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    p999: percentile(values, 99.9),
    max: values.at(-1) ?? Number.NaN,
  };
}

/** A summary of throughput only (scenarios that measure a rate, not per-operation latency). */
export function rateOnly(count: number, seconds: number): Summary {
  const nan = Number.NaN;
  return {
    count,
    seconds,
    perSecond: seconds > 0 ? count / seconds : 0,
    p50: nan,
    p90: nan,
    p99: nan,
    p999: nan,
    max: nan,
  };
}

export interface Sample {
  latencies: number[];
  seconds: number;
  errors: number;
}

/** The rounds of one system as one window: latencies pooled, time and errors added. */
export function mergeSamples(samples: readonly Sample[]): Summary & { errors: number } {
  const latencies = samples.flatMap((sample) => sample.latencies);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const errors = samples.reduce((sum, sample) => sum + sample.errors, 0);
  return { ...summarize(latencies, seconds), errors };
}
