/**
 * A command line read the way a shell reads its lines, before it is cut into words: which `#`
 * starts a comment (one at a word's start, outside quotes, `${…}` and heredoc bodies, ending at
 * its line), where a line goes on (`\` then a new line), where a heredoc's body lies. shell-quote
 * knows none of these: its comment ran to the end of the whole text (`# deploy⏎make deploy` was
 * never read), so what it is given comes from here.
 */
export interface ShellText {
  /**
   * The text for shell-quote: comments removed, continued lines joined, each new line that ends a
   * command as ` ; `, a `#` that starts no comment escaped (`npm test#x`), and each heredoc body
   * line with its quotes, backslashes and `#` escaped, read as a command line of its own (errs
   * toward tagging: no quote in a body can hide the lines after it).
   */
  readable: string;
  /** Per line of the text (split at `\n`): true when a shell runs nothing on it (blank, or wholly a comment). */
  silent: boolean[];
  /**
   * False when the reading could not be followed to the end (the text ends inside a quote, a
   * substitution or `${…}`, or a heredoc has no delimiter): every line is then also read flat
   * (each a command, quotes and `#` escaped; see `flat`), and a deny rule fails closed.
   */
  complete: boolean;
  /**
   * Where each outermost `$(…)`, `<(…)`, `>(…)` and backtick the reader opened lies in `readable`
   * (`start`/`end` around it all, `innerStart`/`innerEnd` around its command line): found by this
   * reader only, which knows what is quoted (`echo '$(' ; rm -rf ~ ; echo ')'` opens none).
   */
  substitutions: Substitution[];
}

/** A command line nested in `readable` (see `ShellText.substitutions`); offsets into `readable`. */
export interface Substitution {
  start: number;
  innerStart: number;
  innerEnd: number;
  end: number;
}

/**
 * A nesting the reader is in: a command list (top, `$(…)`, `(…)`), a double-quoted
 * string, a `${…}`, an arithmetic `$((…))`, `((…))` or `$[…]` (`open`: its parentheses, or
 * brackets, still open inside it).
 */
type Frame =
  | { kind: 'commands'; close: ')' | ''; substitution: boolean }
  | { kind: 'double' }
  | { kind: 'brace' }
  | { kind: 'arithmetic'; close: '))' | ']'; open: number; substitution: boolean };

const OPERATORS = ';&|<>';
/** What separates words: a carriage return does not (`x\r#; rm -rf ~` is the word `x\r#`, then `rm`). */
const BLANKS = ' \t';

/** A body line, or a line read flat: nothing in it can quote, comment or escape past its end. */
const inert = (line: string): string => line.replace(/[\\'"#]/g, '\\$&');

/**
 * A heredoc body line or a line read flat: inert, and its `(`, `)` and backticks end a command, so
 * what a `$(…)` or backtick in it would run is read as a command of its own (an unquoted body's
 * substitutions run; a quote in a body quotes nothing, so none can hide one).
 */
const opensNothing = (line: string): string => inert(line).replace(/[()`]/g, ' ; ');

/**
 * `text` read for its lines. `flat`: when it cannot be followed to its end, also read it flat
 * (false for a line nested in one already read so: a `$(` left open reads to the end, and each
 * level read flat again doubled the text, four deep).
 */
export function readShellText(text: string, flat = true): ShellText {
  const silent = Array.from({ length: countLines(text) }, () => true);
  /** The readable text so far, and its length (where a substitution starts or ends in it). */
  const out = {
    parts: [] as string[],
    length: 0,
    push(...parts: string[]): void {
      for (const part of parts) {
        this.parts.push(part);
        this.length += part.length;
      }
    },
  };
  const substitutions: Substitution[] = [];
  /** The outermost substitution open now, and the frame that closes it (none for a backtick, taken whole). */
  let open: { span: Substitution; frame: Frame } | undefined;
  /** Opens a substitution whose opener (`width` characters) is about to be written, unless one is open already. */
  const opening = (frame: Frame, width: number, startBack = 0): void => {
    if (open !== undefined) return;
    const start = out.length - startBack;
    open = { span: { start, innerStart: out.length + width, innerEnd: -1, end: -1 }, frame };
  };
  /** Closes the open substitution if `frame` (just popped, its closer just written) is its frame. */
  const closing = (frame: Frame): void => {
    if (open?.frame !== frame) return;
    substitutions.push({ ...open.span, innerEnd: out.length - 1, end: out.length });
    open = undefined;
  };
  const stack: Frame[] = [{ kind: 'commands', close: '', substitution: false }];
  const heredocs: { delimiter: string; strip: boolean; quoted: boolean }[] = [];
  let complete = true;
  let line = 0;
  let wordStart = true;
  /** Where the last operator character of a command list was (`<` of `<(…)`). */
  let operatorAt = -1;
  /** Where the last unescaped `$` of a command list was. */
  let dollarAt = -1;
  /**
   * Copies text[from, to) as it is (or `instead` of it), counting its lines and marking those
   * with something on them.
   */
  const take = (from: number, to: number, instead?: string): void => {
    for (let k = from; k < to; k++) {
      const c = text[k]!;
      if (c === '\n') line++;
      else if (!BLANKS.includes(c)) silent[line] = false;
    }
    out.push(instead ?? text.slice(from, to));
  };
  /** Enters the arithmetic whose opener stands at `at`; returns where its opener ends (its last character). */
  const enterArithmetic = (arithmetic: NonNullable<ReturnType<typeof arithmeticAt>>, at: number): number => {
    stack.push(arithmetic);
    take(at, at + arithmetic.width);
    return at + arithmetic.width - 1;
  };
  /** Reads the bodies of the heredocs begun on the line that just ended, from `from`; where reading goes on. */
  const bodies = (from: number): number => {
    let at = from;
    for (const { delimiter, strip, quoted } of heredocs.splice(0)) {
      while (at < text.length) {
        let body = '';
        // An unquoted body's `\⏎` joins its lines before the delimiter is looked for (`EO\⏎F` ends an `<<EOF`).
        for (let joined = true; joined && at <= text.length; ) {
          const end = text.indexOf('\n', at) < 0 ? text.length : text.indexOf('\n', at);
          const part = text.slice(at, end);
          if (part.trim() !== '') silent[line] = false;
          at = end + 1;
          if (end < text.length) line++;
          joined = !quoted && end < text.length && /(^|[^\\])(\\\\)*\\$/.test(part);
          body += joined ? part.slice(0, -1) : part;
        }
        if ((strip ? body.replace(/^\t+/, '') : body) === delimiter) break;
        out.push(opensNothing(body), ' ; ');
      }
    }
    return at;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const next = text[i + 1];
    const frame = stack.at(-1)!;
    if (c === '\\' && next === '\n') {
      i++; // a continued line: joined, mid-word if it was (`x\⏎#y` is the word `x#y`)
      line++;
      continue;
    }
    if (c === '\\') {
      take(i, Math.min(i + 2, text.length));
      i++;
      wordStart = false;
      continue;
    }
    if (c === '`') {
      // bash takes a backtick's command to the next unescaped backtick, whatever quote or `#`
      // lies between (`echo a #` ends there); it is read on its own (shell-commands.ts).
      const close = backtickEnd(text, i + 1);
      if (close < 0) {
        complete = false;
        break;
      }
      if (open === undefined) substitutions.push({ start: out.length, innerStart: out.length + 1, innerEnd: out.length + close - i, end: out.length + close + 1 - i });
      take(i, close + 1);
      i = close;
      wordStart = false;
      continue;
    }
    const ansi = frame.kind === 'brace' && c === '$' && next === "'";
    if ((frame.kind === 'brace' || frame.kind === 'arithmetic') && (c === "'" || ansi)) {
      // `${x:-'}'}`: a quote within `${…}` holds its `}` (and within `$((…))` its `)`); so does
      // `$'…'` within `${…}`, where a backslash escapes (`${x:-$'\'} #'}` is one word for bash).
      const close = quoteEnd(text, ansi ? i + 2 : i + 1, ansi);
      if (close < 0) {
        complete = false;
        break;
      }
      // Within `${…}` the quote is handed on as `_`: shell-quote ends a `${` at its first `}`,
      // quoted or not, and would read what follows the quote's `}` as a comment or a new quote.
      take(i, close + 1, frame.kind === 'brace' ? '_' : undefined);
      i = close;
      continue;
    }
    if (frame.kind === 'arithmetic') {
      // Within `$((…))`: no comment, no heredoc (`1<<2` shifts), no word; parentheses nest.
      const [opens, closes] = frame.close === ']' ? ['[', ']'] : ['(', ')'];
      if (c === opens) frame.open++;
      else if (c === closes && frame.open > 0) frame.open--;
      else if (text.startsWith(frame.close, i)) {
        stack.pop();
        take(i, i + frame.close.length);
        i += frame.close.length - 1;
        wordStart = !frame.substitution; // `$((1))#x` is one word; `((x++)) #y` a comment
        continue;
      } else if (c === ')') {
        // `$((x) )`: bash reads it again as a command substitution; not followed.
        complete = false;
        break;
      }
      if (c === '#') {
        out.push('\\#'); // a base (`2#101`), no comment for shell-quote either
        continue;
      }
    }
    if (frame.kind !== 'commands') {
      // Within a double-quoted string, `${…}` or `$((…))`: no comment, no word; only what nests.
      const arithmetic = arithmeticAt(text, i, false);
      if (arithmetic !== undefined) {
        i = enterArithmetic(arithmetic, i);
        wordStart = false;
        continue;
      }
      const width = c === '$' && (next === '(' || next === '{') ? 2 : 1;
      const depth = stack.length;
      if ((c === '"' && frame.kind === 'double') || (c === '}' && frame.kind === 'brace')) stack.pop();
      else if (width === 2 && next === '(') {
        const commands: Frame = { kind: 'commands', close: ')', substitution: true };
        opening(commands, 2);
        stack.push(commands);
      } else if (width === 2) stack.push({ kind: 'brace' });
      else if (c === '"') stack.push({ kind: 'double' });
      take(i, i + width);
      i += width - 1;
      wordStart = stack.length > depth && stack.at(-1)!.kind === 'commands'; // a command list just opened; else mid-word
      continue;
    }
    // A command list.
    if (c === '\n') {
      line++;
      out.push(' ; ');
      wordStart = true;
      if (heredocs.length > 0) i = bodies(i + 1) - 1;
      continue;
    }
    if (wordStart && stack.length > 1 && /^case([\s;&|()<>]|$)/.test(joinedAt(text, i, 5))) {
      // A case pattern's `)` ends no `$(` or `(` (`"$(case a in a) echo " # ";; esac)"`): not followed.
      complete = false;
      break;
    }
    if (c === '#' && wordStart) {
      const end = text.indexOf('\n', i);
      i = (end < 0 ? text.length : end) - 1; // a comment: to the end of its line, not a character past it
      continue;
    }
    if (BLANKS.includes(c)) {
      out.push(c);
      wordStart = true;
      continue;
    }
    silent[line] = false;
    const arithmetic = arithmeticAt(text, i, wordStart);
    if (c === '#') {
      out.push(dollarAt === i - 1 ? c : '\\#'); // `$#` is a variable, as shell-quote reads it (`\\$#` is not)
    } else if (c === "'" || (c === '$' && next === "'")) {
      const close = quoteEnd(text, c === '$' ? i + 2 : i + 1, c === '$');
      if (close < 0) {
        complete = false;
        break;
      }
      take(i, close + 1);
      i = close;
    } else if (c === '"' || (c === '$' && next === '"')) {
      // `$"…"` is a double-quoted string to bash (translated by the locale, itself in C):
      // shell-quote read it as an empty variable then the string (`$"--x"` as `${}--x`).
      stack.push({ kind: 'double' });
      out.push('"');
      if (c === '$') i++;
    } else if (arithmetic !== undefined) {
      i = enterArithmetic(arithmetic, i);
    } else if (c === '$' && (next === '(' || next === '{')) {
      const opened: Frame = next === '(' ? { kind: 'commands', close: ')', substitution: true } : { kind: 'brace' };
      if (next === '(') opening(opened, 2);
      stack.push(opened);
      out.push(c, next);
      i++;
      wordStart = next === '(';
      continue;
    } else if (c === '(') {
      // `<(…)`, `>(…)` stand in a word as `$(…)` does (`<(x)#y` is one word); `(…)` is a command.
      const process = operatorAt === i - 1 && '<>'.includes(text[i - 1]!);
      const commands: Frame = { kind: 'commands', close: ')', substitution: process };
      if (process) opening(commands, 1, 1); // from its `<` or `>`, written just before
      stack.push(commands);
      out.push(c);
      wordStart = true;
      continue;
    } else if (c === ')' && frame.close === ')') {
      stack.pop();
      out.push(c);
      closing(frame);
      wordStart = !frame.substitution; // `$(x)#y` is one word; `(x) #y` a comment
      continue;
    } else if (c === '<' && next === '<' && text[i + 2] !== '<') {
      const heredoc = heredocAt(text, i + 2);
      if (heredoc === undefined) {
        complete = false;
        break;
      }
      heredocs.push(heredoc);
      // Its word reaches shell-quote as `_`: quoted, escaped or joined across a `\⏎`, it is no
      // command's word, and a `#` in it (`<<E#`) would start shell-quote's comment.
      take(i, heredoc.end, ' << _ ');
      i = heredoc.end - 1;
    } else if (OPERATORS.includes(c) || c === ')') {
      operatorAt = i;
      out.push(c);
      wordStart = true;
      continue;
    } else {
      if (c === '$') dollarAt = i;
      out.push(c);
    }
    wordStart = false;
  }
  if (stack.length > 1) complete = false;
  let readable = out.parts.join('');
  // A substitution left open runs to the end of what was read (and its closer, when one is added).
  const ends = closerEnds(stack, readable.length);
  if (open !== undefined) {
    const end = flat && !complete ? ends.get(open.frame)! : readable.length;
    substitutions.push({ ...open.span, innerEnd: Math.max(open.span.innerStart, end - (flat && !complete ? 1 : 0)), end });
  }
  if (!complete && flat) {
    // What it could not follow is read again flat, every line a command: nothing is hidden by a
    // quote or `#`. What was read is closed first, and the flat lines open nothing (a `(` or
    // backtick ends a command there), so no `$(` left open takes the flat lines into a nested
    // reading that could stop short again (`$((x) ) ; rm -rf ~`).
    readable += `${closers(stack)} ; ${text.split('\n').map(opensNothing).join(' ; ')}`;
    silent.fill(false);
  }
  return { readable, silent, complete, substitutions };
}

/** Where in `readable` each open frame's closer (from `closers`, appended at `at`) ends. */
function closerEnds(stack: readonly Frame[], at: number): Map<Frame, number> {
  const ends = new Map<Frame, number>();
  let end = at + 1; // the space
  for (const frame of stack.slice(1).reverse()) {
    end += closerOf(frame).length;
    ends.set(frame, end);
  }
  return ends;
}

/** What closes each nesting still open, innermost first (a space first, in case the text ended in a `\\`). */
function closers(stack: readonly Frame[]): string {
  return ' ' + stack.slice(1).reverse().map(closerOf).join('');
}

const closerOf = (frame: Frame): string => (frame.kind === 'double' ? '"' : frame.kind === 'brace' ? '}' : frame.close);

/**
 * The arithmetic opened at `at`, with its opener's width: `$((`, `$[` (old bash), and the command
 * `((` (`command`: at a command's start); `<<` in one shifts, `#` is a base.
 */
function arithmeticAt(text: string, at: number, command: boolean): (Frame & { kind: 'arithmetic'; width: number }) | undefined {
  if (text.startsWith('$((', at)) return { kind: 'arithmetic', close: '))', open: 0, substitution: true, width: 3 };
  if (text.startsWith('$[', at)) return { kind: 'arithmetic', close: ']', open: 0, substitution: true, width: 2 };
  if (command && text.startsWith('((', at)) return { kind: 'arithmetic', close: '))', open: 0, substitution: false, width: 2 };
  return undefined;
}

/** The `count` characters from `at` as a shell reads them, continued lines joined (`ca\\⏎se` is `case`). */
function joinedAt(text: string, at: number, count: number): string {
  let word = '';
  for (let k = at; k < text.length && word.length < count; k++) {
    if (text[k] === '\\' && text[k + 1] === '\n') k++;
    else word += text[k];
  }
  return word;
}

function countLines(text: string): number {
  let n = 1;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return n;
}

/** Where a backtick opened just before `from` closes (a backslash escapes the character after it); -1 when it does not. */
function backtickEnd(text: string, from: number): number {
  for (let k = from; k < text.length; k++) {
    if (text[k] === '\\') k++;
    else if (text[k] === '`') return k;
  }
  return -1;
}

/** Where a quote opened just before `from` closes: `'…'`, or `$'…'` (`ansi`: a backslash escapes); -1 when it does not. */
function quoteEnd(text: string, from: number, ansi: boolean): number {
  for (let k = from; k < text.length; k++) {
    if (ansi && text[k] === '\\') k++;
    else if (text[k] === "'") return k;
  }
  return -1;
}

/**
 * The heredoc after `<<` at `from` (`-EOF` strips tabs, `'EOF'`, `"EOF"`, `\EOF` quoted): its
 * delimiter with the quotes removed, whether it was quoted (its body then read as it is), and
 * where its word ends; undefined when it has none.
 */
function heredocAt(text: string, from: number): { delimiter: string; strip: boolean; quoted: boolean; end: number } | undefined {
  let at = from;
  const strip = text[at] === '-';
  if (strip) at++;
  while (text[at] === ' ' || text[at] === '\t') at++;
  let delimiter = '';
  let quoted = false;
  for (; at < text.length && !(BLANKS + OPERATORS + '()\n').includes(text[at]!); at++) {
    const c = text[at]!;
    if (c === "'" || c === '"' || c === '\\') quoted = true;
    if (c === "'" || c === '"') {
      const close = text.indexOf(c, at + 1);
      if (close < 0) return undefined;
      delimiter += text.slice(at + 1, close);
      at = close;
    } else if (c === '\\') delimiter += text[++at] ?? '';
    else delimiter += c;
  }
  return delimiter === '' ? undefined : { delimiter, strip, quoted, end: at };
}
