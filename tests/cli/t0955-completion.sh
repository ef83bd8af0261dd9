#!/usr/bin/env bash
# Shell completion: the bash script 'sparkctl help --completion bash'
# prints (and the build installs) is sourced and its function driven as
# bash drives it (COMP_WORDS, COMP_CWORD; COMPREPLY read back), for
# commands, verbs, options, option values, files, directories and hosts.
# The zsh script is checked by 'zsh -n' where zsh is installed.
. "$SRCDIR/tests/lib.sh"

expect 0 "$SPARKCTL" help --completion bash
cp "$TMP/out" "$TMP/sparkctl.bash"
if [ -n "${BUILDDIR:-}" ] && [ -f "$BUILDDIR/completion/sparkctl" ]; then
  cmp -s "$BUILDDIR/completion/sparkctl" "$TMP/sparkctl.bash" ||
    fail "the build's completion/sparkctl is not the program's"
fi
bash -n "$TMP/sparkctl.bash" || fail "the bash completion is not valid bash"
# shellcheck disable=SC1091
. "$TMP/sparkctl.bash"
complete -p sparkctl | grep -q -- '-F _sparkctl' || fail "no completion registered for sparkctl"

# complete WORD...: complete the last WORD of 'sparkctl WORD...'; the
# candidates in $TMP/reply, one a line, sorted.
complete_line() {
  COMP_WORDS=(sparkctl "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMP_LINE="${COMP_WORDS[*]}"
  COMP_POINT=${#COMP_LINE}
  COMPREPLY=()
  _sparkctl sparkctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
  printf '%s\n' "${COMPREPLY[@]}" | sed '/^$/d' | sort > "$TMP/reply"
}
# offers WORD... / offers_only WORD...: the reply has each word / just them.
offers() {
  for w in "$@"; do
    grep -qxF -- "$w" "$TMP/reply" || { cat "$TMP/reply" >&2; fail "'$w' not offered for: ${COMP_WORDS[*]}"; }
  done
}
offers_only() {
  [ "$(printf '%s\n' "$@" | sort)" = "$(cat "$TMP/reply")" ] ||
    { cat "$TMP/reply" >&2; fail "offered other than '$*' for: ${COMP_WORDS[*]}"; }
}
offers_none() {
  [ ! -s "$TMP/reply" ] || { cat "$TMP/reply" >&2; fail "offered something for: ${COMP_WORDS[*]}"; }
}

# Commands: every one 'sparkctl --help' lists, not the hidden agent.
complete_line ""
expect 0 "$SPARKCTL" --help
for c in $(sed -n '/^commands:$/,/^$/p' "$TMP/out" | awk 'NF > 1 { print $1 }'); do
  grep -qxF "$c" "$TMP/reply" || fail "command '$c' not offered"
done
offers --help --version
! grep -qxF agent "$TMP/reply" || fail "agent offered"
complete_line do
offers_only doctor
complete_line ag
offers_none

# Verbs.
complete_line bench ""
offers nccl link ddp
complete_line bench l
offers_only link
complete_line agent ""
offers_none

# Options, long and short, as the command's --help lists them.
complete_line doctor --
offers --hosts --hostfile --root --from --json --color --help
! grep -qxF -- --plan "$TMP/reply" || fail "netplan option offered to doctor"
complete_line bench nccl -
offers -n --iters --op-timeout --root-rank -o --output
! grep -qxF -- -r "$TMP/reply" || fail "renamed -r offered"
complete_line launch --job
offers_only --job-timeout
complete_line netplan --p
offers_only --plan

# Values of options with choices: '--opt V', '--opt=V' as bash splits it
# (COMP_WORDBREAKS has '='), and as one word.
complete_line netplan --plan ""
offers_only pair switch ring
complete_line netplan --plan s
offers_only switch
complete_line netplan --plan = r
offers_only ring
complete_line netplan --plan =
offers_only pair switch ring
complete_line top --color=al
offers_only always
complete_line launch --contain ""
offers_only auto systemd cgroup marks
complete_line top --sort t
offers_only traffic temp
complete_line env --format ""
offers_only sh env docker json
complete_line help --completion ""
offers_only bash zsh
# A value that is a number: nothing to offer (not the options).
complete_line bench nccl -n ""
offers_none

# Files and directories for FILE and DIR.
mkdir -p "$TMP/work/trees/one" && touch "$TMP/work/hosts.txt" "$TMP/work/inv.json"
cd "$TMP/work"
complete_line topo --from ""
offers hosts.txt inv.json trees
complete_line topo --root ""
offers_only trees
complete_line capture --root t
offers_only trees
cd - > /dev/null

# Hosts for -H: the --hostfile on the line, else $SPARKCTL_HOSTFILE, else ~/.ssh/config.
printf '# the cluster\nspark1 slots=1\nspark2 slots=1   # two\nspark3:1\n\ngpu9 slots=2\n' \
  > "$TMP/hostfile"
complete_line status -H ""
grep -qv spark "$TMP/reply" || true # whatever ~/.ssh/config has; not asserted
SPARKCTL_HOSTFILE=$TMP/hostfile complete_line status -H sp
offers_only spark1 spark2 spark3
SPARKCTL_HOSTFILE=$TMP/hostfile complete_line doctor --hosts spark1,spark
offers_only spark1,spark1 spark1,spark2 spark1,spark3
printf 'other1\n' > "$TMP/hostfile2"
SPARKCTL_HOSTFILE=$TMP/hostfile complete_line launch --hostfile "$TMP/hostfile2" -H ""
offers_only other1
mkdir -p "$TMP/home/.ssh"
printf 'Host sparka sparkb *.lab\n  HostName 198.18.0.1\nhost gpu?\nMatch all\nHost sparkc\n' \
  > "$TMP/home/.ssh/config"
HOME=$TMP/home complete_line top -H ""
offers_only sparka sparkb sparkc
HOME=$TMP/home complete_line bench link --hosts spark
offers_only sparka sparkb sparkc

# Operands: help's are commands and verbs; launch's a command line of its own.
complete_line help ""
offers topo doctor bench
complete_line help bench ""
offers_only nccl link ddp
complete_line launch -N 2 --contain auto ""
grep -qxF bash "$TMP/reply" || fail "launch's command is not completed from the commands"
complete_line launch -N 2 python3 -
! grep -qxF -- --nproc-per-node "$TMP/reply" || fail "launch options offered to the job"
complete_line version ""
offers_only --color -h --help

# zsh: its syntax, and compinit takes it up from fpath for sparkctl, where
# zsh is installed (the test packages have it).
expect 0 "$SPARKCTL" help --completion zsh
if command -v zsh > /dev/null; then
  zsh -n "$TMP/out" || fail "the zsh completion is not valid zsh"
  head -n 1 "$TMP/out" | grep -qx '#compdef sparkctl' || fail "no #compdef line"
  mkdir "$TMP/zfunc"
  cp "$TMP/out" "$TMP/zfunc/_sparkctl"
  HOME=$TMP zsh -f -c 'fpath=("$1" $fpath); autoload -Uz compinit; compinit -u -d "$2"
    [[ ${_comps[sparkctl]} == _sparkctl ]] && autoload +X _sparkctl' zsh "$TMP/zfunc" "$TMP/zcompdump" ||
    fail "zsh's compinit does not take _sparkctl up for sparkctl"
else
  note "zsh not installed: its completion's syntax not checked"
fi
contains "$TMP/out" "'--plan=[pair, switch or ring]:PLAN:(pair switch ring)'"
