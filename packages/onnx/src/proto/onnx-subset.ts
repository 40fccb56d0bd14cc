// The part of ONNX's onnx.proto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto, proto2) that an exported
// attngraph model needs, and that the importer reads: messages and field numbers copied from it, every other field left
// out. Fields left out are absent from the bytes we write (valid protobuf for every reader) and skipped, unread, by the
// importer. Subgraphs (AttributeProto g / graphs: If, Loop, Scan bodies) and the recursive TypeProto kinds are left
// out on purpose: skipping them never recurses, so a file nesting graphs a million deep costs one pass over its bytes
// (their ops are refused by name instead). protobufjs parses this text at run time.
export const ONNX_SUBSET_PROTO = `
syntax = "proto2";
package onnx;

message AttributeProto {
  enum AttributeType {
    UNDEFINED = 0;
    FLOAT = 1;
    INT = 2;
    STRING = 3;
    TENSOR = 4;
    GRAPH = 5;
    FLOATS = 6;
    INTS = 7;
    STRINGS = 8;
    TENSORS = 9;
    GRAPHS = 10;
    SPARSE_TENSOR = 11;
    SPARSE_TENSORS = 12;
    TYPE_PROTO = 13;
    TYPE_PROTOS = 14;
  }
  optional string name = 1;
  optional AttributeType type = 20;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
  repeated float floats = 7;
  repeated int64 ints = 8;
  repeated bytes strings = 9;
  repeated TensorProto tensors = 10;
}

message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
}

message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  optional string domain = 7;
  repeated AttributeProto attribute = 5;
}

message ModelProto {
  optional int64 ir_version = 1;
  repeated OperatorSetIdProto opset_import = 8;
  optional string producer_name = 2;
  optional string producer_version = 3;
  optional string doc_string = 6;
  optional GraphProto graph = 7;
}

message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
  repeated ValueInfoProto value_info = 13;
}

message TensorProto {
  enum DataType {
    UNDEFINED = 0;
    FLOAT = 1;
    INT32 = 6;
    INT64 = 7;
    BOOL = 9;
    DOUBLE = 11;
  }
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional string name = 8;
  optional bytes raw_data = 9;
  repeated float float_data = 4 [packed = true];
  repeated int32 int32_data = 5 [packed = true];
  repeated int64 int64_data = 7 [packed = true];
  repeated double double_data = 10 [packed = true];
  repeated StringStringEntryProto external_data = 13;
  optional int32 data_location = 14;
}

message StringStringEntryProto {
  optional string key = 1;
  optional string value = 2;
}

message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
  }
  repeated Dimension dim = 1;
}

message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
}

message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}
`;
