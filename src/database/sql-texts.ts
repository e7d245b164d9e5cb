/**
 * SQL texts that depend on a few request inputs (a resource form, a sparse fieldset, whether to
 * include), built once per distinct input and then handed out as the same string. Building a resource's
 * `json_build_object(…)` text cost several µs per request, and a repeated string object keeps the hash
 * V8 computed for it, so naming its prepared statement (pooled-queries.ts) is a cheap map lookup.
 *
 * Bounded: fieldsets are chosen by clients, so past `max` distinct keys texts are built and not kept.
 */
export class SqlTexts {
  private readonly texts = new Map<string, string>();

  constructor(private readonly max = 512) {}

  get(key: string, build: () => string): string {
    let text = this.texts.get(key);
    if (text === undefined) {
      text = build();
      if (this.texts.size < this.max) this.texts.set(key, text);
    }
    return text;
  }
}

/** A sparse fieldset's part of a key ('*' for every member). */
export const fieldsetKey = (fieldset: ReadonlySet<string> | undefined): string => (fieldset ? [...fieldset].join(',') : '*');
