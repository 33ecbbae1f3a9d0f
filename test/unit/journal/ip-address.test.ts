// Unit tests of IP parsing and classification: every refused range, the IPv4-in-IPv6 forms, and public addresses.
import { describe, expect, test } from "bun:test";
import { addressKind, parseIp } from "../../../src/journal/ip-address.ts";

describe("parseIp", () => {
  test("reads IPv4, IPv6, bracketed, zoned and IPv4-suffixed IPv6", () => {
    expect(parseIp("192.168.1.20")).toEqual({ family: 4, bytes: new Uint8Array([192, 168, 1, 20]) });
    expect(parseIp("[::1]")?.bytes).toEqual(new Uint8Array([...new Array(15).fill(0), 1]));
    expect(parseIp("fe80::1%eth0")?.family).toBe(6);
    expect(parseIp("::ffff:127.0.0.1")?.bytes.subarray(10)).toEqual(new Uint8Array([0xff, 0xff, 127, 0, 0, 1]));
    expect(parseIp("2001:db8:0:0:0:0:0:1")?.bytes.subarray(0, 4)).toEqual(new Uint8Array([0x20, 0x01, 0x0d, 0xb8]));
  });

  test("rejects what is not one canonical address", () => {
    for (const text of [
      "",
      "example.com",
      "127.1",
      "0x7f.0.0.1",
      "256.0.0.1",
      "01.2.3.4",
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
    ]) {
      expect(parseIp(text)).toBeUndefined();
    }
    expect(parseIp("1:2:3:4:5:6:7")).toBeUndefined();
    expect(parseIp("12345::")).toBeUndefined();
  });
});

describe("addressKind", () => {
  const refused: [string, string][] = [
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.254", "cgnat"],
    ["169.254.169.254", "metadata"],
    ["169.254.1.1", "link-local"],
    ["192.0.0.192", "reserved"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "broadcast"],
    ["198.18.0.1", "benchmarking"],
    ["203.0.113.7", "documentation"],
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["fe80::1", "link-local"],
    ["febf::1", "link-local"],
    ["fc00::1", "unique-local"],
    ["fd00:ec2::254", "unique-local"],
    ["fec0::1", "site-local"],
    ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "ipv4-mapped loopback"],
    ["::ffff:7f00:1", "ipv4-mapped loopback"],
    ["::ffff:a9fe:a9fe", "ipv4-mapped metadata"],
    ["::ffff:10.1.2.3", "ipv4-mapped private"],
    ["::ffff:0:127.0.0.1", "ipv4-translated loopback"],
    ["64:ff9b::7f00:1", "nat64 loopback"],
    ["64:ff9b::10.0.0.1", "nat64 private"],
    ["64:ff9b:1::1", "nat64 local-use"],
    ["2002:7f00:1::", "6to4 loopback"],
    ["2002:c0a8:101::1", "6to4 private"],
    ["::7f00:1", "ipv4-compatible"],
    ["::8.8.8.8", "ipv4-compatible"],
    ["2001:0:4136:e378::1", "teredo"],
    ["2001:db8::1", "documentation"],
    ["100::1", "discard"],
    ["4000::1", "reserved"],
    ["not-an-address", "invalid"],
  ];
  for (const [address, kind] of refused) {
    test(`${address} is ${kind}`, () => {
      expect(addressKind(address)).toBe(kind);
    });
  }

  test("public unicast addresses pass, including public IPv4 inside IPv6", () => {
    for (const address of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "169.255.0.1",
      "192.169.0.1",
      "2606:4700:4700::1111",
      "2a00:1450:4001:81c::200e",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "2002:808:808::1",
    ]) {
      expect([address, addressKind(address)]).toEqual([address, undefined]);
    }
  });
});
