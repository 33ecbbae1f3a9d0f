// --url as a person pastes it: a base URL, or a profile's endpoint as `start` prints it (never doubled).
import { expect, test } from "bun:test";
import { profileEndpoint, profileInUrl } from "../../../src/cli/client-connection.ts";

test("a profile's endpoint is recognised, with or without a trailing slash; a base URL is not", () => {
  expect(profileInUrl("http://127.0.0.1:8080/a2a/hello")).toEqual({ base: "http://127.0.0.1:8080", profile: "hello" });
  expect(profileInUrl("https://agents.example.com/team/a2a/sum-up/")).toEqual({
    base: "https://agents.example.com/team",
    profile: "sum-up",
  });
  expect(profileInUrl("http://127.0.0.1:8080")).toBeUndefined();
  expect(profileInUrl("http://127.0.0.1:8080/a2a")).toBeUndefined();
});

test("the endpoint under a base URL", () => {
  expect(profileEndpoint("http://127.0.0.1:8080/", "echo")).toBe("http://127.0.0.1:8080/a2a/echo");
});
