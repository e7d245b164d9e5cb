// The command line of the bench scripts: `--name` flags and `--name value` options.
const argv = process.argv.slice(2);

export const flag = (name) => argv.includes(`--${name}`);

export const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
