module github.com/aclc-dev/aclc

go 1.26.8
