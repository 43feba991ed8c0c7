module zklock.tests/gozk

go 1.21

require github.com/go-zookeeper/zk v1.0.4
