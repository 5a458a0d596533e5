# bash completion for snapfuzz: commands, their options, and the values
# of the options that take a word from a fixed set, a directory or a file;
# crash ids for reproduce and minimize (from OUT/crashes).
#
# Commands and options are read from the binary's own help (`snapfuzz
# --help`, `snapfuzz CMD --help`): what it prints is what it takes, so the
# completion never lags behind the binary it completes for. The binary is
# the one being completed (${COMP_WORDS[0]}), found on PATH or given as a
# path.

_snapfuzz_commands()
{
        "$1" --help 2>/dev/null |
                sed -n 's/^\(usage:\)\{0,1\} *snapfuzz \([a-z][a-z-]*\).*/\2/p'
}

# "--option" or "--option ARG" per line, one line per option, from a
# command's help (an option shown anywhere with a value takes one).
_snapfuzz_options()
{
        "$1" "$2" --help 2>/dev/null |
                grep -oE -- '(^|[[ ,])--[a-z][a-z0-9-]*( [A-Z0-9][A-Z_.|0-9]*)?' |
                sed 's/^[[ ,]//' |
                awk '!($1 in seen) || NF > 1 { seen[$1] = $0 } END { for (o in seen) print seen[o] }' |
                sort
}

_snapfuzz_crash_ids()
{
        local out=snapfuzz-out i
        for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
                [[ ${COMP_WORDS[i]} == --out ]] && out=${COMP_WORDS[i + 1]}
        done
        [[ -d $out/crashes ]] && (cd "$out/crashes" && compgen -d -- "$1")
}

_snapfuzz()
{
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
        local sf=${COMP_WORDS[0]} cmd="" i
        [[ $sf == "~/"* ]] && sf=$HOME/${sf#"~/"}
        for ((i = 1; i < COMP_CWORD; i++)); do
                if [[ ${COMP_WORDS[i]} != -* ]]; then
                        cmd=${COMP_WORDS[i]}
                        break
                fi
        done
        COMPREPLY=()
        if [[ -z $cmd ]]; then
                if [[ $cur == -* ]]; then
                        mapfile -t COMPREPLY < <(compgen -W '--help --version' -- "$cur")
                else
                        mapfile -t COMPREPLY < <(compgen -W "$(_snapfuzz_commands "$sf")" -- "$cur")
                fi
                return 0
        fi

        local opts arg
        opts=$(_snapfuzz_options "$sf" "$cmd")
        if [[ $prev == --* ]]; then
                arg=$(printf '%s\n' "$opts" | sed -n "s/^$prev \(.*\)/\1/p" | head -n 1)
                if [[ -n $arg ]]; then
                        case $prev in
                        --sandbox) mapfile -t COMPREPLY < <(compgen -W 'strict log off' -- "$cur") ;;
                        --target-output) mapfile -t COMPREPLY < <(compgen -W 'log pass discard' -- "$cur") ;;
                        --detect-leaks) mapfile -t COMPREPLY < <(compgen -W '0 1' -- "$cur") ;;
                        --cc) mapfile -t COMPREPLY < <(compgen -W 'clang gcc' -- "$cur") ;;
                        --sanitize) mapfile -t COMPREPLY < <(compgen -W 'address undefined leak address,undefined' -- "$cur") ;;
                        *)
                                case $arg in
                                DIR* | OUT_DIR*) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
                                FILE* | PATH*) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
                                esac
                                ;;
                        esac
                        return 0
                fi
        fi
        if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "$(printf '%s\n' "$opts" | cut -d' ' -f1) --help" -- "$cur")
                return 0
        fi
        case $cmd in
        run) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
        reproduce | minimize) mapfile -t COMPREPLY < <(_snapfuzz_crash_ids "$cur") ;;
        status | crashes) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
        esac
        return 0
}
complete -F _snapfuzz snapfuzz
