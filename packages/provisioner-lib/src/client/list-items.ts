// Hand-written: the JSON streaming parsers on npm (stream-json, @streamparser/json) build every value token by token
// in JavaScript, several times slower than `JSON.parse` on a list of 10,000 objects. This one only finds where each
// item of a list's `items` array begins and ends, and leaves the parsing of each item to `JSON.parse`: a list is
// decoded as fast as in one piece, without its text or its whole tree ever held.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/** What precedes the `items` array at the top level of a list, as Go's encoder writes it (whitespace allowed). */
const ITEMS_KEY = /[{,]\s*"items"\s*:\s*$/;

/** An item's `metadata` key, as Go's encoder writes it before the object's brace. */
const METADATA_KEY = Buffer.from('"metadata":');
/** The `managedFields` key of an item's metadata, as Go's encoder writes it, with the array's bracket. */
const MANAGED_FIELDS_KEY = Buffer.from('"managedFields":[');

/** Whether `chunk` holds `bytes` at `at`. */
function holds(chunk: Buffer, at: number, bytes: Buffer): boolean {
  if (at < 0 || at + bytes.length > chunk.length) return false;
  for (let k = 0; k < bytes.length; k++) if (chunk[at + k] !== bytes[k]) return false;
  return true;
}

/** How `RestClient.list` reads the items of a list. */
export interface ListItemOptions {
  /**
   * Leave each item's `metadata.managedFields` out before it is parsed, as a cache that strips them would after:
   * about half the bytes of a claim or a volume written by several managers, never parsed. Where a chunk's edge
   * falls inside the key or the bytes before it, or the JSON is not as Go's encoder writes it (the key after
   * another, no whitespace), the field is parsed with the rest of the item. Default false.
   */
  stripManagedFields?: boolean;
}

/**
 * Splits a Kubernetes list's JSON, given chunk by chunk as it arrives, into its items: each is parsed on its own as
 * soon as its last byte is in and handed to `each`; {@link ListItemSplitter.end} parses the rest (`kind`, `apiVersion`,
 * `metadata`, with `items` empty). Memory: the chunk at hand, the item being read and the list's small rest.
 *
 * Items are expected to be objects, as in every Kubernetes list; anything else in `items` is an error. UTF-8 is
 * split only between bytes below 0x80 (no byte of a multi-byte character is), so each item's bytes decode whole.
 */
export class ListItemSplitter {
  private readonly each: (item: unknown) => void;
  /** Nesting depth at the current byte: 1 inside the list object, 2 inside its `items` array, 3+ inside an item. */
  private depth = 0;
  private inString = false;
  /** The previous byte was a backslash inside a string (a chunk ended between it and what it escapes). */
  private escaped = false;
  /** Whether the array at depth 2 is the `items` array. */
  private inItems = false;
  /** The list's bytes outside its items, and the current item's bytes from earlier chunks. */
  private readonly rest: Buffer[] = [];
  private itemParts: Buffer[] = [];
  private items = 0;
  private readonly stripManagedFields: boolean;
  /** Whether the object at depth 4 is the current item's `metadata` (where `managedFields` is looked for). */
  private inMetadata = false;
  /** Whether the bytes at hand are the current item's `managedFields` array, left out of the item. */
  private skipping = false;

  /**
   * @param each - called with every item, parsed, in order. An exception from it ends the split (rethrown).
   * @param options - see {@link ListItemOptions}.
   */
  constructor(each: (item: unknown) => void, options: ListItemOptions = {}) {
    this.each = each;
    this.stripManagedFields = options.stripManagedFields ?? false;
  }

  /** Reads one more chunk of the list's bytes. */
  write(chunk: Buffer): void {
    const n = chunk.length;
    /** Where the bytes not yet copied (to the rest or the item) begin. */
    let from = 0;
    /** Where the item being read began in this chunk; -1 when it began in an earlier one or none is being read. */
    let itemStart = this.inItem() ? 0 : -1;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          i++;
          continue;
        }
        // A loop, not `indexOf`: a list's strings are short (names, keys, timestamps), and a call into C++ for
        // each took twice as long as reading their bytes here (a list of 10,000 claims: 52–57 ms against 28–34).
        let c = chunk[i]!;
        while (c !== QUOTE && c !== BACKSLASH && ++i < n) c = chunk[i]!;
        if (i === n) break;
        if (c === BACKSLASH) {
          if (i + 1 === n) this.escaped = true;
          i += 2;
          continue;
        }
        this.inString = false;
        i++;
        continue;
      }
      const c = chunk[i]!;
      if (this.depth === 2 && this.inItems) {
        // Between items: an object begins one, a comma (left out of the rest, whose `items` stays empty) or
        // whitespace separates two, the bracket ends the array.
        if (c === OPEN_BRACE) {
          this.flushRest(chunk, from, i);
          itemStart = i;
          this.depth++;
        } else if (c === COMMA) from = i + 1;
        else if (c === CLOSE_BRACKET) {
          this.depth--;
          this.inItems = false;
        } else if (c > 0x20) throw new Error('list: an item of `items` is not an object');
      } else if (c === QUOTE) {
        // A key after another in the item's metadata: `,"managedFields":[` is left out, up to its closing bracket.
        if (this.inMetadata && this.depth === 4 && chunk[i - 1] === COMMA && holds(chunk, i, MANAGED_FIELDS_KEY)) {
          if (itemStart === -1) itemStart = 0;
          this.itemParts.push(chunk.subarray(itemStart, i - 1));
          this.skipping = true;
          this.depth++;
          i += MANAGED_FIELDS_KEY.length;
          continue;
        }
        this.inString = true;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
        if (this.depth === 1 && c === OPEN_BRACKET) {
          this.flushRest(chunk, from, i);
          from = i;
          this.inItems = ITEMS_KEY.test(Buffer.concat(this.rest).toString('utf8'));
        } else if (this.depth === 3 && this.stripManagedFields && this.inItems && c === OPEN_BRACE) {
          this.inMetadata = holds(chunk, i - METADATA_KEY.length, METADATA_KEY);
        }
        this.depth++;
      } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        this.depth--;
        if (this.depth === 4 && this.skipping) {
          this.skipping = false;
          itemStart = i + 1;
        } else if (this.depth === 3) this.inMetadata = false;
        else if (this.depth === 2 && this.inItems) {
          this.item(chunk, itemStart === -1 ? 0 : itemStart, i + 1);
          itemStart = -1;
          from = i + 1;
        }
      }
      i++;
    }
    if (!this.inItem()) this.flushRest(chunk, from, n);
    else if (!this.skipping) this.itemParts.push(chunk.subarray(itemStart === -1 ? 0 : itemStart));
  }

  /**
   * Ends the list: returns its rest parsed (`items` empty) and how many items it had.
   *
   * @throws Error when the bytes ended inside the list (a cut answer) or the rest is not JSON.
   */
  end(): { list: Record<string, unknown>; items: number } {
    if (this.depth !== 0 || this.inString) throw new Error('list: the answer ended before the list did');
    const list = JSON.parse(Buffer.concat(this.rest).toString('utf8')) as Record<string, unknown>;
    return { list, items: this.items };
  }

  /** Whether the bytes at hand belong to an item. */
  private inItem(): boolean {
    return this.inItems && this.depth >= 3;
  }

  private flushRest(chunk: Buffer, from: number, to: number): void {
    if (to > from) this.rest.push(chunk.subarray(from, to));
  }

  private item(chunk: Buffer, start: number, end: number): void {
    let text: string;
    if (this.itemParts.length === 0) text = chunk.toString('utf8', start, end);
    else {
      this.itemParts.push(chunk.subarray(start, end));
      text = Buffer.concat(this.itemParts).toString('utf8');
      this.itemParts = [];
    }
    this.items++;
    this.each(JSON.parse(text));
  }
}
