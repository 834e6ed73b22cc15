"""The accelerator's decision logic and the boot watchdog, without booting anything."""

import json

from vpnbench.hosts import vmaccel
from vpnbench.hosts.vmaccel import Accel, BootWatch, clean_console

FIRMWARE = "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2)\r\nBooting from ROM...\r\n\x1b[2J"


def test_console_escape_codes_never_reach_a_message():
    assert clean_console(FIRMWARE) == "SeaBIOS (version 1.16.2)\nBooting from ROM...\n"


def test_watchdog_names_the_accelerator_the_stage_and_the_way_out():
    watch = BootWatch(Accel(True, "asked"), "VM client", limit=0)
    watch.feed(FIRMWARE)
    assert watch.expired()
    assert watch.message() == ('VM client did not boot within 0 s under KVM (the firmware ran; no output from '
                               "the kernel's init after it); " + vmaccel.WAY_OUT)
    tcg = BootWatch(Accel(False, "asked"), "the VM", limit=0)
    assert tcg.expired() and "under TCG (no output at all)" in tcg.message() and "accel" not in tcg.message()


def test_a_guest_whose_init_spoke_is_never_expired_even_split_across_reads():
    watch = BootWatch(Accel(True, "asked"), limit=0)
    watch.feed(FIRMWARE + "vpnbench-vm: in")
    assert watch.expired()
    watch.feed("it\r\n")
    assert watch.booted and not watch.expired()


def test_qemu_exit_before_boot_quotes_its_error_line():
    watch = BootWatch(Accel(True, "asked"), "the VM")
    text = ("qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
            "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion failed.\n")
    message = watch.exited_message(-6, text)
    assert message.startswith("the VM stopped before its kernel booted under KVM (QEMU exit -6): "
                              "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69; set accel")


def test_the_verdict_is_kept_per_boot_and_per_kernel_and_qemu(tmp_path, monkeypatch):
    monkeypatch.setattr(vmaccel, "VERDICT_FILE", tmp_path / "verdict")
    vmaccel._write_verdict("k1", Accel(False, "KVM probe: the guest did not boot within 10 s"))
    cached = vmaccel._read_verdict("k1")
    assert cached is not None and not cached.kvm and cached.reason.startswith("KVM probe: the guest did not boot")
    assert "cached for this boot" in cached.reason
    assert vmaccel._read_verdict("k2") is None  # another kernel or QEMU: probe again
    data = json.loads((tmp_path / "verdict").read_text())
    data["boot_id"] = "an earlier boot"
    (tmp_path / "verdict").write_text(json.dumps(data))
    assert vmaccel._read_verdict("k1") is None  # proven on another boot: not trusted


def test_without_a_usable_kvm_device_auto_is_tcg_without_booting(tmp_path, monkeypatch):
    monkeypatch.setattr(vmaccel, "KVM_DEVICE", str(tmp_path / "missing"))
    monkeypatch.setattr(vmaccel, "boot_probe", lambda *a: (_ for _ in ()).throw(AssertionError("booted")))
    chosen = vmaccel.choose("auto", "/boot/vmlinuz-x", tmp_path / "initrd")
    assert not chosen.kvm and chosen.reason == f"{tmp_path / 'missing'} missing or not accessible"
    assert chosen.setup_timeout_scale == 4.0
    assert vmaccel.choose("kvm", "/boot/vmlinuz-x", tmp_path / "initrd").kvm  # asked for: the watchdog guards it
