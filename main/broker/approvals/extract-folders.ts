/**
 * Programs that unpack files into a folder (`tar -x`, `unzip`, `cpio -i`, `patch`, `git apply`,
 * `7z x`): the files they write are in the archive or patch, not on the line, so the folder they
 * write into is what is judged. A folder at or above the workspace that holds one of the
 * gateway's files counts (`tar xf x.tar -C ~` can replace `~/.config/chatty/approvals.json`),
 * unlike a reader's word (`grep -r x .` names the folder and writes nothing).
 */

/**
 * The folders `program` with `args` unpacks into, as written (`-C ..`, `-d ~`); `['.']` when it
 * unpacks into the folder it runs in; undefined when it unpacks nothing (`tar tf`, `unzip -l`).
 */
export function extractionFolders(program: string, args: readonly string[]): string[] | undefined {
  const valueOf = (short: string, long: string): string[] => {
    const found: string[] = [];
    args.forEach((arg, i) => {
      if (arg === short || arg === long) found.push(args[i + 1] ?? '.');
      else if (arg.startsWith(`${long}=`)) found.push(arg.slice(long.length + 1));
      else if (arg.startsWith(short) && arg.length > 2 && short.length === 2) found.push(arg.slice(2));
    });
    return found;
  };
  const into = (folders: string[]): string[] => (folders.length > 0 ? folders : ['.']);
  if (program === 'tar' || program === 'bsdtar' || program === 'gtar') {
    const first = args[0] ?? '';
    const extracts = (/^[A-Za-z]+$/.test(first) && first.includes('x')) || args.some((a) => /^-[A-Za-wyz]*x/.test(a) || /^--(extract|get)$/.test(a));
    return extracts ? into(valueOf('-C', '--directory')) : undefined;
  }
  if (program === 'unzip') return args.some((a) => /^-[A-Za-z]*[lvtz]/.test(a) && !/^-d/.test(a)) ? undefined : into(valueOf('-d', '-d'));
  if (program === 'cpio') return args.some((a) => /^-[A-Za-z]*i/.test(a) || a === '--extract') ? into(valueOf('-D', '--directory')) : undefined;
  if (program === 'patch') return into(valueOf('-d', '--directory'));
  if (program === 'git') return args.includes('apply') || args.includes('am') ? ['.'] : undefined;
  if (program === '7z' || program === '7za' || program === '7zr') {
    return args[0] === 'x' || args[0] === 'e' ? into(args.filter((a) => a.startsWith('-o')).map((a) => a.slice(2))) : undefined;
  }
  return undefined;
}
