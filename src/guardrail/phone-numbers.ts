// Finds phone numbers in text by their shape, for the personal-data guardrail; containsPhoneNumber states the rule.
// Pure string work: no I/O, no locale tables.

/**
 * A run of digit groups: an optional "+", then groups of digits (one may start with a parenthesised area code, as in
 * "(0)20") separated by one space, "-", "." or "/". It starts after something that is not a letter, digit or "_".
 * Its end is checked in code, not by a look-ahead, which would make the engine keep a backtrack point per group.
 */
const TOKEN = /(?<![\p{L}\p{N}\p{M}_+])\+?(?:\(\d{1,5}\)\d*|\d+)(?:[ \-./]?\(\d{1,5}\)\d*|[ \-./]\d+)*/gu;
const GROUP = /\(\d+\)\d*|\d+/g;
const WORD_CHAR = /[\p{L}\p{N}\p{M}_]/u;
/** The North American 3-3-4 shape, optionally after a "1": 555-123-4567, 1 555 123 4567. */
const NORTH_AMERICAN = /^(?:1[ .-])?\d{3}([ .-])\d{3}\1\d{4}$/;
/** A day-month-year date with a four-digit year ("05.03.2024", "06/12/2024"): no phone number, nor what follows it. */
const DATE = /^\d{1,2}([./-])\d{1,2}\1\d{4}(?!\d)/;

const MIN_DIGITS = 9;
const MAX_DIGITS = 15;

/**
 * Whether `text` holds something shaped like a phone number with 9–15 digits (country code included, an "00"
 * international prefix not counted):
 * - international: "+" or "00" then a country code not starting with 0: "+44 20 7946 0958", "0044 20 7946 0958";
 * - an area code in parentheses: "(555) 123-4567", "(020) 7946 0958";
 * - a national trunk prefix, a 0 followed at once by another digit: "020 7946 0958", "06-12345678", "0612345678";
 * - the North American 3-3-4 shape: "555-123-4567", "555.123.4567".
 * Not a phone number: a plain run of digits not starting with 0 ("123456789012", an order id or a timestamp), a
 * number grouped in thousands ("1 234 567 890"), decimals, IP addresses, versions, and dates even when a time
 * follows ("05.03.2024 14:00" reads as the digits 05032024 14, yet is no phone number). A run that goes on
 * past the phone number still counts ("+44 20 7946 0958 1234"); one that starts before it does not
 * ("12 020 7946 0958" reads as one number starting with 1).
 */
export function containsPhoneNumber(text: string): boolean {
  for (const match of text.matchAll(TOKEN)) {
    // A last group glued to a word ("…0958abc") is part of that word, not of the number.
    const glued = WORD_CHAR.test(text.charAt(match.index + match[0].length));
    if (tokenHasPhoneNumber(match[0], glued)) return true;
  }
  return false;
}

/** The token, or a leading stretch of it ending at a group's end: "+44 20 7946 0958 1234" holds a phone number. */
function tokenHasPhoneNumber(token: string, glued: boolean): boolean {
  if (DATE.test(token)) return false;
  let digits = 0;
  for (const group of token.matchAll(GROUP)) {
    const end = group.index + group[0].length;
    if (glued && end === token.length) return false;
    digits += group[0].replace(/\D/g, "").length;
    if (digits > MAX_DIGITS + 2) return false; // "00" + 15 digits is the longest that can still pass
    if (digits >= MIN_DIGITS && isPhoneShaped(token.slice(0, end))) return true;
  }
  return false;
}

function isPhoneShaped(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "");
  if (candidate.startsWith("+")) return inRange(digits) && !digits.startsWith("0");
  if (/^00[1-9]/.test(candidate)) return inRange(digits.slice(2));
  if (/^\(\d{2,5}\)/.test(candidate)) return inRange(digits);
  if (/^0[1-9]/.test(candidate)) return inRange(digits);
  return NORTH_AMERICAN.test(candidate);
}

function inRange(digits: string): boolean {
  return digits.length >= MIN_DIGITS && digits.length <= MAX_DIGITS;
}
