#!/usr/bin/env bash
# Debian packages the test suite needs beyond Node: chromium (the browser of the headless tests, and the source of
# SwiftShader, a CPU Vulkan driver that lets WebGPU run without a GPU) and libvulkan1 (the Vulkan loader that Dawn, the
# `webgpu` npm package, opens) and mesa-vulkan-drivers (lavapipe, a second CPU Vulkan driver that CI runs WebGPU on
# too: a driver that reorders workgroup memory differently caught a reduction that SwiftShader let pass). Installs them
# only where missing; needs root or sudo.
set -euo pipefail
if [ -f /usr/lib/chromium/vk_swiftshader_icd.json ] && [ -x /usr/bin/chromium ] && ldconfig -p 2>/dev/null | grep -q 'libvulkan.so.1 ' \
  && [ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing chromium, libvulkan1 and mesa-vulkan-drivers (Debian packages) for the browser and WebGPU tests" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium libvulkan1 mesa-vulkan-drivers >/dev/null
