# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_zklock_global_optspecs
    string join \n C/cluster= H/hosts= session-timeout= connect-timeout= auth= auth-file= tls tls-ca= tls-cert= tls-key= tls-no-verify-hostname sasl= sasl-user= sasl-password-file= sasl-service= sasl-host= acl= read-only root= admin-port= retries= o/output= q/quiet no-trunc v/verbose h/help V/version
end

function __fish_zklock_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_zklock_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_zklock_using_subcommand
    set -l cmd (__fish_zklock_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c zklock -n "__fish_zklock_needs_command" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_needs_command" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_needs_command" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_needs_command" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_needs_command" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_needs_command" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_needs_command" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_needs_command" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_needs_command" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_needs_command" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_needs_command" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_needs_command" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_needs_command" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_needs_command" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_needs_command" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_needs_command" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_needs_command" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_needs_command" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_needs_command" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_needs_command" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_needs_command" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_needs_command" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_needs_command" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_needs_command" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_needs_command" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_needs_command" -s V -l version -d 'Print version'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "lock" -d 'Take an exclusive lock; run COMMAND under it, or hold it'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "rlock" -d 'Take the read side of a read-write lock (readers share)'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "wlock" -d 'Take the write side of a read-write lock (exclusive)'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "sem" -d 'Hold one of N leases of a semaphore; run COMMAND under it'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "release" -d 'Release by token, or break a lock (delete or revoke)'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "check" -d 'Tell whether each TOKEN\'s node holds its lock now'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "stat" -d 'Show one lock in full, or a plain node\'s stat'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "ls" -d 'List every lock under PATH, recursively'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "dump" -d 'Dump every lock and contender under PATH (JSON)'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "deadlocks" -d 'Find every wait-for cycle across the locks under PATH'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "history" -d 'Every hold of every lock, from transaction logs'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "watch" -d 'Follow the locks under a path live'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "reap" -d 'Delete stale lock contender nodes'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "exporter" -d 'Serve the locks\' metrics for Prometheus'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "top" -d 'Watch the locks under PATH live, full screen'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "verify" -d 'Test the lock under faults on your own ensemble'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "completions" -d 'Print shell completions (bash, zsh, fish)'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "man" -d 'Show a man page, zklock\'s or a subcommand\'s'
complete -c zklock -n "__fish_zklock_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s w -l timeout -d 'Give up after waiting DUR (exit 1, or -E)' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s E -l conflict-exit-code -d 'Exit code when not acquired' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l data -d 'Text to store in the lock node\'s owner record' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l dialect -d 'Whose node names to make' -r -f -a "curator\t''
kazoo\t''
hbase\t''
zk-recipe\t''"
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l lease -d 'With --detach: release after DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l while-pid -d 'With --detach: release when process PID ends' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l ttl -d 'Make a node the server deletes DUR after use' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l kill-signal -d 'Signal for the command when the lock is lost' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l kill-after -d 'SIGKILL this long after --kill-signal' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l max-hold -d 'Stop the command after DUR; exit 124' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l once-per -d 'Run COMMAND at most once per DUR, fleet-wide' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l lock-delay -d 'After an unclean end, wait DUR before running' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s n -l no-wait -d 'Give up at once if the lock is taken'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l record-command -d 'Record COMMAND\'s whole command line'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l allow-odd-name -d 'Take a lock whose name has odd characters'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l shell -d 'Run COMMAND through `sh -c`'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l detach -d 'Hold in the background; print the token, exit'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l preserve-status -d 'With --max-hold: exit as the command did'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l once-per-even-on-failure -d 'With --once-per: count a run as it starts'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand lock" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s w -l timeout -d 'Give up after waiting DUR (exit 1, or -E)' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s E -l conflict-exit-code -d 'Exit code when not acquired' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l data -d 'Text to store in the lock node\'s owner record' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l dialect -d 'Whose node names to make' -r -f -a "curator\t''
kazoo\t''
hbase\t''
zk-recipe\t''"
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l lease -d 'With --detach: release after DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l while-pid -d 'With --detach: release when process PID ends' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l ttl -d 'Make a node the server deletes DUR after use' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l kill-signal -d 'Signal for the command when the lock is lost' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l kill-after -d 'SIGKILL this long after --kill-signal' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l max-hold -d 'Stop the command after DUR; exit 124' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l once-per -d 'Run COMMAND at most once per DUR, fleet-wide' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l lock-delay -d 'After an unclean end, wait DUR before running' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s n -l no-wait -d 'Give up at once if the lock is taken'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l record-command -d 'Record COMMAND\'s whole command line'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l allow-odd-name -d 'Take a lock whose name has odd characters'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l shell -d 'Run COMMAND through `sh -c`'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l detach -d 'Hold in the background; print the token, exit'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l preserve-status -d 'With --max-hold: exit as the command did'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l once-per-even-on-failure -d 'With --once-per: count a run as it starts'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand rlock" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s w -l timeout -d 'Give up after waiting DUR (exit 1, or -E)' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s E -l conflict-exit-code -d 'Exit code when not acquired' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l data -d 'Text to store in the lock node\'s owner record' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l dialect -d 'Whose node names to make' -r -f -a "curator\t''
kazoo\t''
hbase\t''
zk-recipe\t''"
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l lease -d 'With --detach: release after DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l while-pid -d 'With --detach: release when process PID ends' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l ttl -d 'Make a node the server deletes DUR after use' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l kill-signal -d 'Signal for the command when the lock is lost' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l kill-after -d 'SIGKILL this long after --kill-signal' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l max-hold -d 'Stop the command after DUR; exit 124' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l once-per -d 'Run COMMAND at most once per DUR, fleet-wide' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l lock-delay -d 'After an unclean end, wait DUR before running' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s n -l no-wait -d 'Give up at once if the lock is taken'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l record-command -d 'Record COMMAND\'s whole command line'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l allow-odd-name -d 'Take a lock whose name has odd characters'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l shell -d 'Run COMMAND through `sh -c`'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l detach -d 'Hold in the background; print the token, exit'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l preserve-status -d 'With --max-hold: exit as the command did'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l once-per-even-on-failure -d 'With --once-per: count a run as it starts'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand wlock" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l max-leases -d 'The most leases held at once, by all clients' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s w -l timeout -d 'Give up after waiting DUR (exit 1, or -E)' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s E -l conflict-exit-code -d 'Exit code when not acquired' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l data -d 'Text to store in the lock node\'s owner record' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l dialect -d 'Whose node names to make' -r -f -a "curator\t''
kazoo\t''
hbase\t''
zk-recipe\t''"
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l lease -d 'With --detach: release after DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l while-pid -d 'With --detach: release when process PID ends' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l ttl -d 'Make a node the server deletes DUR after use' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l kill-signal -d 'Signal for the command when the lock is lost' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l kill-after -d 'SIGKILL this long after --kill-signal' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l max-hold -d 'Stop the command after DUR; exit 124' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l once-per -d 'Run COMMAND at most once per DUR, fleet-wide' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l lock-delay -d 'After an unclean end, wait DUR before running' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s n -l no-wait -d 'Give up at once if the lock is taken'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l record-command -d 'Record COMMAND\'s whole command line'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l allow-odd-name -d 'Take a lock whose name has odd characters'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l shell -d 'Run COMMAND through `sh -c`'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l detach -d 'Hold in the background; print the token, exit'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l preserve-status -d 'With --max-hold: exit as the command did'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l once-per-even-on-failure -d 'With --once-per: count a run as it starts'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand sem" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l force-after -d 'With --revoke: delete holders left after DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l reason -d 'Why: kept in the end record of each delete' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand release" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand release" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand release" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand release" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand release" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand release" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand release" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand release" -l holders -d 'TARGET is a lock: delete the nodes that hold it now'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l revoke -d 'TARGET is a lock: ask its holders to let go'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l if-exists -d 'A token whose node is already gone is no error'
complete -c zklock -n "__fish_zklock_using_subcommand release" -s y -l yes -d 'Delete without asking'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l dry-run -d 'List the holders that would be broken; do nothing'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand release" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand release" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand release" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand check" -l fence -d 'The fencing token (czxid) the node must have' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand check" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand check" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand check" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand check" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand check" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand check" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand check" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand check" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand check" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand check" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand check" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand check" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand check" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand check" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand stat" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l older-than -d 'Only locks held for at least DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l owner -d 'Only locks where a holder\'s OWNER has TEXT' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l dialect -d 'Only locks of this dialect' -r -f -a "curator\t''
kazoo\t''
hbase\t''
zk-recipe\t''
zk-c-recipe\t''
go-zookeeper\t''
solr\t''
kafka\t''
hadoop\t''
helix\t''
generic\t''
mixed\t''"
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sort -d 'The order of the lines [default: path]' -r -f -a "path\t''
age\t''
waiters\t''"
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l output-file -d 'With -o prometheus: write the metrics to FILE' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l contended -d 'Only locks that someone waits for'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l held -d 'Only locks held now'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l no-headers -d 'Print no header line'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand ls" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l sessions -d 'Group the contenders by owner session'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand dump" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l min-age -d 'Only cycles that have stood at least DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l certain -d 'Only certain cycles'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand deadlocks" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand history" -l data-dir -d 'A ZooKeeper server\'s dataDir' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l log -d 'Transaction log files' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l since -d 'Only contenders alive at or after TIME' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l until -d 'Only contenders alive at or before TIME' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand history" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand history" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand history" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand history" -l overlaps -d 'List overlapping holds instead of holds'
complete -c zklock -n "__fish_zklock_using_subcommand history" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand history" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand history" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand history" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand history" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand history" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l until -d 'Exit 0 once the path is free or held' -r -f -a "free\t''
held\t''"
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s w -l timeout -d 'Exit 1 if still watching DUR after the start' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l count -d 'Exit 0 after N changes' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand watch" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l older-than -d 'Contender nodes created at least DUR ago' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l session -d 'Contender nodes of this session' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l disconnected-for -d 'Contender nodes whose session is gone DUR' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l reason -d 'Why: kept in the end record of each delete' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l all -d 'Every contender node'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l empty -d 'Also delete empty lock directories'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l dry-run -d 'Only list what would be deleted'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s y -l yes -d 'Delete without asking'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand reap" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l listen -d 'Serve /metrics here' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l max-locks -d 'Locks with series of their own' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l survey-interval -d 'How often to survey sessions' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand exporter" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand top" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand top" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand top" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand top" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand top" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand top" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand top" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand top" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand top" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand top" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand top" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand top" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand top" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand top" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand top" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l duration -d 'How long to run' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l contenders -d 'How many holders contend (2 to 20)' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l mode -d 'exclusive (lock) or rw (rlock and wlock mixed)' -r -f -a "exclusive\t''
rw\t''"
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l faults -d 'The faults to inject: cut, pause, kill (comma-separated)' -r -f -a "cut\t'The holder\'s connection held (bytes held, no reset) past its session timeout'
pause\t'The holder (zklock, its guard and its command) stopped past its session timeout'
kill\t'zklock, its guard, or both killed with SIGKILL'"
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l path -d 'The path to work under, which must not exist' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l kill-after -d 'The holders\' --kill-after: SIGKILL this long after SIGTERM' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand man" -s C -l cluster -d 'Take the global options of cluster profile NAME, a [clusters.NAME] table of the configuration file ($ZKLOCK_CONFIG, else ~/.config/zklock/config.toml); flags and variables override it' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -s H -l hosts -d 'ZooKeeper servers' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l session-timeout -d 'Session timeout to ask the server for' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l connect-timeout -d 'Give up when no server answers within this time (exit 3)' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l auth -d 'Authenticate as SCHEME:CREDENTIAL, e.g. digest:alice:secret (repeatable)' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l auth-file -d 'Read --auth values from FILE, one SCHEME:CREDENTIAL a line, so that no secret sits in the process list' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand man" -l tls-ca -d 'Trust the CA certificates in this PEM file [default: the system\'s trust store]' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand man" -l tls-cert -d 'Client certificate (PEM) for mutual TLS; its identity (x509) can then own ACLs' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand man" -l tls-key -d 'The private key (PEM) of --tls-cert' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand man" -l sasl -d 'Authenticate with SASL: digest-md5 (--sasl-user, --sasl-password-file) or gssapi (Kerberos, from the ticket cache of KRB5CCNAME)' -r -f -a "digest-md5\t''
gssapi\t''"
complete -c zklock -n "__fish_zklock_using_subcommand man" -l sasl-user -d 'The DIGEST-MD5 user name' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l sasl-password-file -d 'The file holding the DIGEST-MD5 password (its first line)' -r -F
complete -c zklock -n "__fish_zklock_using_subcommand man" -l sasl-service -d 'The service part of the server\'s Kerberos principal' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l sasl-host -d 'The host part of the server\'s Kerberos principal [default: the host connected to]' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l acl -d 'ACL of the nodes zklock creates: open, creator (all for your identities, read for the world), creator-only, or SCHEME:ID:PERMS entries (repeatable, or comma-separated)' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l root -d 'Where locks live' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l admin-port -d 'The ensemble members\' AdminServer port, asked (`connections`, `watches`, `configuration`) who is behind each session when a member refuses the cons and wchc four-letter words: PORT for every member, MEMBER=PORT (HOST:CLIENTPORT=PORT) for one (repeatable, or comma-separated) [default: 8080]' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -l retries -d 'Retries of a request after a connection loss' -r
complete -c zklock -n "__fish_zklock_using_subcommand man" -s o -l output -d 'Output format [default: table; json for dump]' -r -f -a "table\t'A fixed set of columns fitted to the terminal\'s width (80 off one)'
wide\t'A table of every column, with nothing cut or wrapped'
json\t''
prometheus\t'The Prometheus text format (`ls` only)'"
complete -c zklock -n "__fish_zklock_using_subcommand man" -l tls -d 'Talk TLS to every host (ZooKeeper\'s secureClientPort); or name single hosts tcp+tls://host:port'
complete -c zklock -n "__fish_zklock_using_subcommand man" -l tls-no-verify-hostname -d 'Accept a server certificate that does not name the host connected to'
complete -c zklock -n "__fish_zklock_using_subcommand man" -l read-only -d 'Allow a read-only server (inspection commands only)'
complete -c zklock -n "__fish_zklock_using_subcommand man" -s q -l quiet -d 'Print nothing but results and errors'
complete -c zklock -n "__fish_zklock_using_subcommand man" -l no-trunc -d 'The same as -o wide: every column, nothing cut'
complete -c zklock -n "__fish_zklock_using_subcommand man" -s v -l verbose -d 'Log what zklock does to stderr (-vv for more)'
complete -c zklock -n "__fish_zklock_using_subcommand man" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "lock" -d 'Take an exclusive lock; run COMMAND under it, or hold it'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "rlock" -d 'Take the read side of a read-write lock (readers share)'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "wlock" -d 'Take the write side of a read-write lock (exclusive)'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "sem" -d 'Hold one of N leases of a semaphore; run COMMAND under it'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "release" -d 'Release by token, or break a lock (delete or revoke)'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "check" -d 'Tell whether each TOKEN\'s node holds its lock now'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "stat" -d 'Show one lock in full, or a plain node\'s stat'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "ls" -d 'List every lock under PATH, recursively'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "dump" -d 'Dump every lock and contender under PATH (JSON)'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "deadlocks" -d 'Find every wait-for cycle across the locks under PATH'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "history" -d 'Every hold of every lock, from transaction logs'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "watch" -d 'Follow the locks under a path live'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "reap" -d 'Delete stale lock contender nodes'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "exporter" -d 'Serve the locks\' metrics for Prometheus'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "top" -d 'Watch the locks under PATH live, full screen'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "verify" -d 'Test the lock under faults on your own ensemble'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "completions" -d 'Print shell completions (bash, zsh, fish)'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "man" -d 'Show a man page, zklock\'s or a subcommand\'s'
complete -c zklock -n "__fish_zklock_using_subcommand help; and not __fish_seen_subcommand_from lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c zklock -n "__fish_zklock_using_subcommand completions" -f -a "bash zsh fish"
complete -c zklock -n "__fish_zklock_using_subcommand man" -f -a "lock rlock wlock sem release check stat ls dump deadlocks history watch reap exporter top verify completions man"

# The command run under a lock (after `--`): its name, then its own arguments.
function __fish_zklock_after_separator
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words); or return 1
    __fish_seen_subcommand_from lock rlock wlock sem
end
function __fish_zklock_complete_command
    set -l words (commandline -opc)
    set -l at (contains -i -- -- $words)
    set -l command
    if test $at -lt (count $words)
        set command (string escape -- $words[(math $at + 1)..-1])
    end
    complete -C "$command $(commandline -ct)"
end
complete -c zklock -n __fish_zklock_after_separator -x -a "(__fish_zklock_complete_command)"
