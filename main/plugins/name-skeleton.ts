/**
 * What a name looks like to a reader (or a model) who takes look-alikes for one another: case,
 * `-` `_` `.`, `0` `O`, and `1` `l` `I` folded. Two tools of one plugin, or two modules, with the
 * same skeleton (`delete_file`, `delete-file`, `de1ete_fi1e`; `echo`, `ech0`, `Ech0`) are
 * refused. ASCII only: names are ASCII by their rules.
 * Beyond this (`rn`/`m`, `vv`/`w`) depends on the font and is not refused.
 */
export function nameSkeleton(name: string): string {
  return name.toLowerCase().replace(/[-_.]/g, '_').replace(/0/g, 'o').replace(/[1i]/g, 'l');
}

/** How two names with one skeleton differ, as a refusal says it. */
export function howAlike(a: string, b: string): string {
  return a.toLowerCase() === b.toLowerCase() ? 'differ only in case' : 'differ only in case or look-alike characters (- _ . alike, 0 O alike, 1 l I alike)';
}
