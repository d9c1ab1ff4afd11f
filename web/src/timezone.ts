// The browser's time zone, saved with the notification setting so that the
// expiry emails show times in it ("16:55 CET (15:55 UTC)").

/** What the API accepts as a zone name (it also checks the name is known). */
const ZONE_NAME = /^[A-Za-z0-9_+\-/]{1,64}$/;

/**
 * The browser's IANA time zone ("Europe/Berlin"), or undefined when the
 * browser gives none or an odd value (never sent then: the emails stay in
 * UTC).
 */
export function browserTimeZone(
  resolve: () => string | undefined = () => Intl.DateTimeFormat().resolvedOptions().timeZone,
): string | undefined {
  let zone: string | undefined;
  try {
    zone = resolve();
  } catch {
    return undefined;
  }
  return typeof zone === 'string' && ZONE_NAME.test(zone) && zone !== 'Local' ? zone : undefined;
}

/** The zone to save: the browser's, when it is known and not saved yet. */
export function zoneToSave(saved: string | undefined, browser: string | undefined): string | undefined {
  return browser !== undefined && browser !== saved ? browser : undefined;
}
