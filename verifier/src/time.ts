/** Wire timestamps: UTC RFC 3339 with milliseconds and `Z` (`2026-11-22T01:00:00.000Z`). */

const ISO = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z$/;

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Milliseconds since the epoch of a wire timestamp, or `null` when it is not exactly that form
 * or not a real date and time (year 1 to 9999, as Python's `datetime` has it).
 */
export function parseIsoMillis(text: string): number | null {
  const found = ISO.exec(text);
  if (found === null) return null;
  const [year, month, day, hour, minute, second, millis] = found.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const moment = new Date(0);
  moment.setUTCFullYear(year, month - 1, day);
  moment.setUTCHours(hour, minute, second, millis);
  return moment.getTime();
}

export function formatIsoMillis(ms: number): string {
  return new Date(ms).toISOString();
}
