"""The vkd3d workaround: a patched copy of Wine 8.0's wined3d.dll, where it applies.

Wine 8.0 bundles vkd3d 1.6 inside ``wined3d.dll``. That vkd3d registers descriptor
heaps only when the Vulkan device has VK_EXT_descriptor_indexing, yet
``d3d12_command_list_set_descriptor_table`` looks every heap up regardless; on
Mesa 22.3's lavapipe (no ``runtimeDescriptorArray``) the lookup fails, the table is
dropped, and every dispatch returns S_OK with uninitialised outputs. Replacing the
conditional jump that skips the registration with a NOP makes heaps registered
always. The copy is renamed from "Wine builtin DLL" in its header so that Wine loads
it as a native DLL (``WINEDLLOVERRIDES=wined3d=n``) from the host's folder.

The patch is applied only to the exact build it was worked out on (Debian's wine64
8.0~repack-4, checked by version, file hash and the bytes themselves). Elsewhere
(Debian 13's Wine 10 has a newer vkd3d and Mesa) nothing is patched and the
self-test decides.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..errors import DmlError


class WorkaroundError(DmlError, RuntimeError):
    """The workaround's preconditions look right but its bytes do not match."""


@dataclass(frozen=True)
class Patch:
    """Byte edits to one known wined3d.dll build."""

    wine_version: str
    original: Path
    sha256: str
    edits: tuple[tuple[int, bytes, bytes], ...]
    """(file offset, original bytes, new bytes)."""


IMAGE_BASE = 0x367600000
BUILTIN_SIGNATURE = b"Wine builtin DLL"
NATIVE_SIGNATURE = b"dmlops-patched!!"
"""Any 16 bytes other than the builtin signature make Wine treat the copy as native."""

KNOWN = (
    Patch(
        wine_version="wine-8.0 (Debian 8.0~repack-4)",
        original=Path("/usr/lib/x86_64-linux-gnu/wine/x86_64-windows/wined3d.dll"),
        sha256="2355630ef8ad3900504e17f8f569171fcc4c2978da4e147d2e678584f6f5058d",
        edits=(
            # jne (0f 85 rel32) at VA 0x3677108ce -> a 6-byte NOP: always register the heap.
            (0x3677108CE - IMAGE_BASE, bytes.fromhex("0f85bc000000"), bytes.fromhex("660f1f440000")),
            (0x40, BUILTIN_SIGNATURE, NATIVE_SIGNATURE),
        ),
    ),
)


def apply(wine_version: str, target: Path) -> str:
    """Write the patched copy to ``target`` when a known patch fits this Wine; what was done."""
    patch = next((k for k in KNOWN if k.wine_version == wine_version), None)
    if patch is None:
        if target.exists():
            target.unlink()  # left over from another stack
        return f"not needed or not known for {wine_version!r}: nothing patched (the self-test decides)"
    if not patch.original.exists():
        raise WorkaroundError(f"{wine_version}: {patch.original} is missing; the known patch cannot be applied")
    data = bytearray(patch.original.read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    if digest != patch.sha256:
        raise WorkaroundError(
            f"{patch.original} of {wine_version} is not the build the vkd3d workaround was made for "
            f"(sha256 {digest}, expected {patch.sha256}); refusing to patch it"
        )
    for offset, old, new in patch.edits:
        if bytes(data[offset : offset + len(old)]) != old:
            raise WorkaroundError(f"{patch.original}: unexpected bytes at 0x{offset:x}; refusing to patch it")
        data[offset : offset + len(new)] = new
    if target.exists() and target.read_bytes() == data:
        return "already applied (patched wined3d.dll next to the host)"
    partial = target.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(target)
    return f"applied for {wine_version}: patched copy of wined3d.dll next to the host"


def describe(target: Path) -> str:
    """What setup.json records about the workaround."""
    return "patched wined3d.dll (vkd3d descriptor-heap registration)" if target.exists() else "none"
