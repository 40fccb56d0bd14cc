// findDuplicateKey: the keys JSON.parse would silently drop, found in the text, at the depths asked for, through
// strings that hold quotes, backslashes, braces and commas.
import { describe, expect, it } from "vitest";
import { findDuplicateKey } from "./json-keys.js";

describe("findDuplicateKey", () => {
  it("finds a key repeated in the outer object, or in an object inside it, with the keys around it", () => {
    expect(findDuplicateKey('{"a":1,"b":2,"a":3}', 2)).toEqual({ path: [], key: "a" });
    expect(findDuplicateKey('{"a":1,"t":{"x":1,"y":[1,2],"x":2}}', 2)).toEqual({ path: ["t"], key: "x" });
  });

  it("looks no deeper than asked: an object two levels in, or inside an array, is not its business", () => {
    expect(findDuplicateKey('{"t":{"x":1,"x":2}}', 1)).toBeUndefined();
    expect(findDuplicateKey('{"t":{"u":{"x":1,"x":2}}}', 2)).toBeUndefined();
    expect(findDuplicateKey('{"t":[{"x":1,"x":2}]}', 2)).toBeUndefined();
  });

  it("the same key in different objects, or a key's text as a value, is no duplicate", () => {
    expect(findDuplicateKey('{"a":{"k":1},"b":{"k":2},"c":"a","d":["a","b"]}', 2)).toBeUndefined();
  });

  it("reads keys as JSON does: escapes decoded, quotes, braces and commas inside strings are text", () => {
    expect(findDuplicateKey(String.raw`{"a\"b":1,"x":"},{\"a\\\"b\":","a\u0022b":2}`, 2)).toEqual({
      path: [],
      key: 'a"b',
    });
    expect(findDuplicateKey(String.raw`{"\\":1,"\\\\":2}`, 2)).toBeUndefined();
    expect(findDuplicateKey(' { "k" : { "a" : 1 , "a" : 2 } } ', 2)).toEqual({ path: ["k"], key: "a" });
  });
});
