# tests/storage/cycle.sh - the storage cycle inside the VM with sparkctl's
# storage verbs (see t0800-storage-vm.sh).
. /job/raw.sh
die "the verb cycle is not written yet"
