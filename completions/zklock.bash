_zklock() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="zklock"
                ;;
            zklock,completions)
                cmd="zklock__subcmd__completions"
                ;;
            zklock,dump)
                cmd="zklock__subcmd__dump"
                ;;
            zklock,help)
                cmd="zklock__subcmd__help"
                ;;
            zklock,lock)
                cmd="zklock__subcmd__lock"
                ;;
            zklock,ls)
                cmd="zklock__subcmd__ls"
                ;;
            zklock,man)
                cmd="zklock__subcmd__man"
                ;;
            zklock,reap)
                cmd="zklock__subcmd__reap"
                ;;
            zklock,release)
                cmd="zklock__subcmd__release"
                ;;
            zklock,rlock)
                cmd="zklock__subcmd__rlock"
                ;;
            zklock,sem)
                cmd="zklock__subcmd__sem"
                ;;
            zklock,stat)
                cmd="zklock__subcmd__stat"
                ;;
            zklock,watch)
                cmd="zklock__subcmd__watch"
                ;;
            zklock,wlock)
                cmd="zklock__subcmd__wlock"
                ;;
            zklock__subcmd__help,completions)
                cmd="zklock__subcmd__help__subcmd__completions"
                ;;
            zklock__subcmd__help,dump)
                cmd="zklock__subcmd__help__subcmd__dump"
                ;;
            zklock__subcmd__help,help)
                cmd="zklock__subcmd__help__subcmd__help"
                ;;
            zklock__subcmd__help,lock)
                cmd="zklock__subcmd__help__subcmd__lock"
                ;;
            zklock__subcmd__help,ls)
                cmd="zklock__subcmd__help__subcmd__ls"
                ;;
            zklock__subcmd__help,man)
                cmd="zklock__subcmd__help__subcmd__man"
                ;;
            zklock__subcmd__help,reap)
                cmd="zklock__subcmd__help__subcmd__reap"
                ;;
            zklock__subcmd__help,release)
                cmd="zklock__subcmd__help__subcmd__release"
                ;;
            zklock__subcmd__help,rlock)
                cmd="zklock__subcmd__help__subcmd__rlock"
                ;;
            zklock__subcmd__help,sem)
                cmd="zklock__subcmd__help__subcmd__sem"
                ;;
            zklock__subcmd__help,stat)
                cmd="zklock__subcmd__help__subcmd__stat"
                ;;
            zklock__subcmd__help,watch)
                cmd="zklock__subcmd__help__subcmd__watch"
                ;;
            zklock__subcmd__help,wlock)
                cmd="zklock__subcmd__help__subcmd__wlock"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        zklock)
            opts="-H -o -q -v -h -V --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help --version lock rlock wlock sem release stat ls dump watch reap completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__completions)
            opts="-H -o -q -v -h --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help bash zsh fish"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__dump)
            opts="-H -o -q -v -h --sessions --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help)
            opts="lock rlock wlock sem release stat ls dump watch reap completions man help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__completions)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__dump)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__lock)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__ls)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__man)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__reap)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__release)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__rlock)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__sem)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__stat)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__watch)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__help__subcmd__wlock)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__lock)
            opts="-n -w -E -H -o -q -v -h --no-wait --timeout --conflict-exit-code --data --record-command --dialect --shell --detach --lease --while-pid --ttl --holder-report-fd --kill-signal --kill-after --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conflict-exit-code)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -E)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dialect)
                    COMPREPLY=($(compgen -W "curator kazoo hbase zk-recipe" -- "${cur}"))
                    return 0
                    ;;
                --lease)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --while-pid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-report-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-signal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__ls)
            opts="-H -o -q -v -h --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__man)
            opts="-H -o -q -v -h --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__reap)
            opts="-y -H -o -q -v -h --older-than --session --all --empty --dry-run --yes --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --older-than)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__release)
            opts="-H -o -q -v -h --holders --revoke --force-after --if-exists --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --force-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__rlock)
            opts="-n -w -E -H -o -q -v -h --no-wait --timeout --conflict-exit-code --data --record-command --dialect --shell --detach --lease --while-pid --ttl --holder-report-fd --kill-signal --kill-after --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conflict-exit-code)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -E)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dialect)
                    COMPREPLY=($(compgen -W "curator kazoo hbase zk-recipe" -- "${cur}"))
                    return 0
                    ;;
                --lease)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --while-pid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-report-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-signal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__sem)
            opts="-n -w -E -H -o -q -v -h --max-leases --no-wait --timeout --conflict-exit-code --data --record-command --dialect --shell --detach --lease --while-pid --ttl --holder-report-fd --kill-signal --kill-after --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --max-leases)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conflict-exit-code)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -E)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dialect)
                    COMPREPLY=($(compgen -W "curator kazoo hbase zk-recipe" -- "${cur}"))
                    return 0
                    ;;
                --lease)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --while-pid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-report-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-signal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__stat)
            opts="-H -o -q -v -h --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__watch)
            opts="-w -H -o -q -v -h --until --timeout --count --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --until)
                    COMPREPLY=($(compgen -W "free held" -- "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --count)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        zklock__subcmd__wlock)
            opts="-n -w -E -H -o -q -v -h --no-wait --timeout --conflict-exit-code --data --record-command --dialect --shell --detach --lease --while-pid --ttl --holder-report-fd --kill-signal --kill-after --hosts --session-timeout --connect-timeout --auth --auth-file --tls --tls-ca --tls-cert --tls-key --tls-no-verify-hostname --sasl --sasl-user --sasl-password-file --sasl-service --sasl-host --acl --holder-secrets-fd --read-only --root --admin-port --retries --output --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -w)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --conflict-exit-code)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -E)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --data)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --dialect)
                    COMPREPLY=($(compgen -W "curator kazoo hbase zk-recipe" -- "${cur}"))
                    return 0
                    ;;
                --lease)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --while-pid)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --ttl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-report-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-signal)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --kill-after)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --hosts)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -H)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --session-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --connect-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --auth-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-ca)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-cert)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --tls-key)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl)
                    COMPREPLY=($(compgen -W "digest-md5 gssapi" -- "${cur}"))
                    return 0
                    ;;
                --sasl-user)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-password-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-service)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sasl-host)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --acl)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --holder-secrets-fd)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --root)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --admin-port)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --retries)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --output)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                -o)
                    COMPREPLY=($(compgen -W "table json" -- "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _zklock -o nosort -o bashdefault -o default zklock
else
    complete -F _zklock -o bashdefault -o default zklock
fi
