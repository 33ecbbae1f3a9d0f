// storeFailure: Redis being full, read-only, loading, unreachable or failing over becomes STORE_UNAVAILABLE (nothing was
// accepted); every other error propagates unchanged.
import { describe, expect, test } from "bun:test";
import { storeFailure } from "../../../src/journal/index.ts";
import { InvalidParamsError, StoreUnavailableError } from "../../../src/protocol/index.ts";

describe("storeFailure", () => {
  test("a full, read-only, loading, unreachable or failing-over Redis becomes STORE_UNAVAILABLE with the cause kept", () => {
    for (const text of [
      "OOM command not allowed when used memory > 'maxmemory'.",
      "READONLY You can't write against a read only replica.",
      "LOADING Redis is loading the dataset in memory",
      "connect ECONNREFUSED 127.0.0.1:6379",
      "Connection is closed.",
      "Reached the max retries per request limit (which is 1).",
      // A Cluster failing over: redirections ioredis did not follow (a pipeline over several slots), or followed
      // until it gave up (a single command while the nodes disagree on a slot)
      "MOVED 6721 127.0.0.1:20437",
      "Too many Cluster redirections. Last error: ReplyError: MOVED 9842 127.0.0.1:21922",
      "ASK 6721 127.0.0.1:20437",
      "TRYAGAIN Multiple keys request during rehashing of slot",
      "CLUSTERDOWN The cluster is down",
      "Failed to refresh slots cache.",
    ]) {
      const cause = new Error(text);
      let thrown: unknown;
      try {
        storeFailure(cause);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(StoreUnavailableError);
      expect((thrown as StoreUnavailableError).reason).toBe("STORE_UNAVAILABLE");
      expect((thrown as StoreUnavailableError).cause).toBe(cause);
    }
  });

  test("any other error propagates unchanged", () => {
    const other = new InvalidParamsError("bad");
    expect(() => storeFailure(other)).toThrow(other);
    expect(() => storeFailure(new Error("ERR wrong number of arguments"))).toThrow("ERR wrong number of arguments");
    // A word of a redirection inside another message is not one.
    expect(() => storeFailure(new Error("ERR the task MOVED 3 times"))).toThrow("ERR the task MOVED 3 times");
  });
});
