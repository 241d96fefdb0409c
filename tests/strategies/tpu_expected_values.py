# Prints TensorFlow's values for troupe's TPU tests (tests/strategies/tpu_topology_test.cpp,
# device_assignment_test.cpp), which hold them as literals; no test runs this.
# Run: bench/.venv/bin/python tests/strategies/tpu_expected_values.py (TensorFlow 2.21, CPU only).
# emulated() builds troupe's emulated slice (Topology::emulated_slice) from TF's Topology.
import numpy as np
from tensorflow.python.tpu import topology as T, device_assignment as D

def chip_mesh(cores):
    return {1:[1,1],2:[1,1],4:[2,1],8:[2,2],16:[4,2],32:[4,4]}[cores]

def emulated(cores, hosts):
    cpc = 1 if cores == 1 else 2
    mx, my = chip_mesh(cores)
    per_host = cores // hosts
    coords = []
    if per_host < cpc:  # half a chip per host
        for h in range(hosts):
            chip = h // cpc
            coords.append([[chip % mx, chip // mx, 0, h % cpc]])
    else:
        bx, by = chip_mesh(per_host)
        blocks_x = mx // bx
        for h in range(hosts):
            ox, oy = (h % blocks_x) * bx, (h // blocks_x) * by
            dev = []
            for y in range(by):
                for x in range(bx):
                    for c in range(cpc):
                        dev.append([ox + x, oy + y, 0, c])
            coords.append(dev)
    return T.Topology(mesh_shape=[mx, my, 1, cpc], device_coordinates=coords)

def cbytes(b):
    return '"' + ''.join('\\x%02x' % c for c in b) + '"'

for cores, hosts in [(1,1),(2,1),(8,1),(32,1),(16,2),(32,4)]:
    t = emulated(cores, hosts)
    print(cores, hosts, t.mesh_shape.tolist(), t.device_coordinates.reshape(-1).tolist())
    print('  bytes', len(t.serialized()), cbytes(t.serialized()))

def da(t, shape, **kw):
    try:
        a = D.DeviceAssignment.build(t, computation_shape=shape, **kw)
        print('  shape', shape, kw, 'replicas', a.num_replicas, 'cores', a.num_cores_per_replica)
        print('   ', a.core_assignment.reshape(-1).tolist())
        return a
    except Exception as e:
        print('  shape', shape, kw, 'ERROR', type(e).__name__, repr(str(e)))

t8 = emulated(8, 1)
print('8 cores')
da(t8, [1,1,1,1], num_replicas=8)
a = da(t8, [1,1,1,2], num_replicas=4)
print('   tpu_device(1,1)', a.tpu_device(1, 1), a.tpu_device(1,1,job='worker'), a.host_device(2,0,job='worker'), a.tpu_ordinal(3,1))
print('   lookup(0,1)', a.lookup_replicas(0,1))
da(t8, [2,1,1,1], num_replicas=4)
da(t8, [1,2,1,2], num_replicas=2)
da(t8, [1,1,1,1], num_replicas=3)
da(t8, [1,1,1,1], num_replicas=1)
da(t8, None)
da(t8, [1,1,1,2], num_replicas=2)
da(t8, [1,1,1,1], computation_stride=[2,1,1,1], num_replicas=8)
da(t8, [1,1,1,1], computation_stride=[2,1,1,1], num_replicas=4)
da(t8, [1,1,1,2], num_replicas=4, device_order_mode=D.DeviceOrderMode.MESH)
da(t8, [1,1,1,2], num_replicas=2, device_order_mode=D.DeviceOrderMode.RING)
da(t8, [1,1,1,4], num_replicas=1)
da(t8, [1,1,1,1], num_replicas=9)
da(t8, [1,1,1], num_replicas=1)
da(t8, [1,1,1,0], num_replicas=1)
da(t8, [1,1,1,1], computation_stride=[1,0,1,1], num_replicas=1)
da(t8, [3,1,1,1], num_replicas=1)
t32 = emulated(32, 1)
print('32 cores')
da(t32, [1,1,1,1], num_replicas=32)
da(t32, [1,1,1,2], num_replicas=16)
da(t32, [2,2,1,2], num_replicas=4)
da(t32, [1,1,1,1], num_replicas=5)
t16 = emulated(16, 2)
print('16 cores 2 hosts')
a = da(t16, [1,1,1,2], num_replicas=8)
print('   ', [a.tpu_device(r, 0, job='worker') for r in range(8)])
print('   ', [a.host_device(r, 0, job='worker') for r in range(8)])
print('   lookup(1,0)', a.lookup_replicas(1, 0), 'lookup(0,1)', a.lookup_replicas(0, 1))
try: a.lookup_replicas(2, 0)
except Exception as e: print('   lookup err', repr(str(e)))
print('   name at', t16.tpu_device_name_at_coordinates([3,1,0,1], job='worker'), t16.cpu_device_name_at_coordinates([3,1,0,1]), t16.tpu_device_name_at_coordinates([0,0,0,1]))
# Constructor errors
for ms, dc in [([2,2,1], [[[0,0,0]]]), ([2,2,0,2], [[[0,0,0,0]]]), ([2,2,1,2], [[0,0,0,0]])]:
    try: T.Topology(mesh_shape=ms, device_coordinates=dc)
    except Exception as e: print('topo err', type(e).__name__, repr(str(e)))
for ca in [[[0,0,0,0]], [[[0,0,0]]]]:
    try: D.DeviceAssignment(t8, ca)
    except Exception as e: print('da err', type(e).__name__, repr(str(e)))
# missing devices
tm = T.Topology(mesh_shape=[2,2,1,2], device_coordinates=[[[0,0,0,0],[0,0,0,1],[1,0,0,0],[1,0,0,1]]])
print('missing', tm.missing_devices.tolist())
da(tm, [1,1,1,1], num_replicas=4)
# proto parse errors
from tensorflow.core.protobuf.tpu import topology_pb2
def perr(**kw):
    p = topology_pb2.TopologyProto(**kw)
    try: T.Topology(serialized=p.SerializeToString()); print('parse ok', kw)
    except Exception as e: print('parse err', kw, cbytes(p.SerializeToString()), repr(str(e)))
perr(mesh_shape=[2,2,1])
perr(mesh_shape=[2,2,1,2], num_tasks=-1)
perr(mesh_shape=[2,2,1,2], num_tasks=1, num_tpu_devices_per_task=-1)
perr(mesh_shape=[2,2,1,2], num_tasks=1, num_tpu_devices_per_task=2, device_coordinates=[0,0,0,0])
perr(mesh_shape=[2,2,1,2], num_tasks=1, num_tpu_devices_per_task=1, device_coordinates=[0,0,0,-1])
