// Small request checks: the A2A-Version rule, media types against a profile's input modes, ListTasks timestamps.
import { expect, test } from "bun:test";
import { checkVersion, JSONRPC_VERSIONS, requestedVersion } from "../../../src/gateway/index.ts";
import { timestampMs } from "../../../src/gateway/operations/list-tasks.ts";
import { acceptsMediaType } from "../../../src/gateway/operations/message-checks.ts";
import { VersionNotSupportedError } from "../../../src/protocol/index.ts";

const request = (headers: Record<string, string>, query = "") =>
  new Request(`http://x/a2a/echo${query}`, { method: "POST", headers });

test("A2A-Version 1.0 and 1.0.x are served; absent (read as 0.3) and others are -32009 naming 1.0", () => {
  expect(() => checkVersion(request({ "A2A-Version": "1.0" }))).not.toThrow();
  expect(() => checkVersion(request({ "a2a-version": " 1.0.2 " }))).not.toThrow();
  expect(() => checkVersion(request({}, "?A2A-Version=1.0"))).not.toThrow();
  for (const headers of [{}, { "A2A-Version": "" }, { "A2A-Version": "0.3" }, { "A2A-Version": "1.1" }]) {
    expect(() => checkVersion(request(headers))).toThrow(VersionNotSupportedError);
  }
  expect(() => checkVersion(request({}))).toThrow(/no A2A-Version header \(read as 0\.3\).*serves 1\.0/);
});

test("the JSON-RPC endpoint reads an absent or empty A2A-Version, and 0.3.x, as 0.3; 1.0.x as 1.0; others are -32009", () => {
  const version = (headers: Record<string, string>, query = "") =>
    requestedVersion(request(headers, query), JSONRPC_VERSIONS);
  expect(version({})).toBe("0.3");
  expect(version({ "A2A-Version": " " })).toBe("0.3");
  expect(version({ "A2A-Version": "0.3" })).toBe("0.3");
  expect(version({ "A2A-Version": "0.3.0" })).toBe("0.3");
  expect(version({ "A2A-Version": "1.0.1" })).toBe("1.0");
  expect(version({}, "?A2A-Version=1.0")).toBe("1.0");
  for (const asked of ["0.2", "1.1", "2.0", "0.3x", "latest"]) {
    expect(() => version({ "A2A-Version": asked })).toThrow(/serves 1\.0, 0\.3/);
  }
});

test("media types match exactly, by type/* or */*, ignoring parameters and case", () => {
  expect(acceptsMediaType(["text/plain"], "text/plain; charset=utf-8")).toBe(true);
  expect(acceptsMediaType(["text/plain"], "Text/Plain")).toBe(true);
  expect(acceptsMediaType(["image/*"], "image/png")).toBe(true);
  expect(acceptsMediaType(["*/*"], "application/pdf")).toBe(true);
  expect(acceptsMediaType(["text/plain"], "application/json")).toBe(false);
});

test("statusTimestampAfter keeps milliseconds and rounds a finer fraction up (the filter is inclusive)", () => {
  expect(timestampMs("2026-01-05T10:00:00.123Z")).toBe(Date.UTC(2026, 0, 5, 10, 0, 0, 123));
  expect(timestampMs("2026-01-05T10:00:00Z")).toBe(Date.UTC(2026, 0, 5, 10, 0, 0, 0));
  expect(timestampMs("2026-01-05T10:00:00.1Z")).toBe(Date.UTC(2026, 0, 5, 10, 0, 0, 100));
  expect(timestampMs("2026-01-05T10:00:00.123000Z")).toBe(Date.UTC(2026, 0, 5, 10, 0, 0, 123));
  expect(timestampMs("2026-01-05T10:00:00.123001Z")).toBe(Date.UTC(2026, 0, 5, 10, 0, 0, 124));
});
