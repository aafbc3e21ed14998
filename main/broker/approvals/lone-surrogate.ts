/**
 * Whether an approval's text holds a lone surrogate (half of a UTF-16 pair, which a worker's JSON
 * string may carry as `\udc00`). It is no character: the person is shown it as a marker
 * (`<U+DC00>`), while a program, a shell or a file name gets U+FFFD's bytes in its place, so what
 * would run is not what was approved. Refused before anyone is asked (`by: unpaired`). A pair (an
 * emoji) is one character and passes.
 */
export function hasLoneSurrogate(text: string): boolean {
  return LONE.test(text);
}

/** With the `u` flag a well-formed pair is one code point, so only a lone half is in `Cs`. */
const LONE = /\p{Cs}/u;
