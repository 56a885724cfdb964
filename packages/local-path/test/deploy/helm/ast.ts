// The parse tree of a Go text/template, as text/template/parse builds it (the subset of node kinds Helm charts use).

/** A value-producing term of a command. */
export type Operand =
  | { kind: 'dot' }
  | { kind: 'nil' }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number | bigint }
  | { kind: 'field'; names: string[] } // .A.B
  | { kind: 'variable'; name: string; names: string[] } // $x.A.B
  | { kind: 'identifier'; name: string } // a function
  | { kind: 'chain'; base: Operand; names: string[] } // (pipeline).A.B
  | { kind: 'pipeline'; pipe: Pipeline }; // (pipeline)

export interface Command {
  args: Operand[];
}

export interface Pipeline {
  line: number;
  /** `$x := ...` (declare) or `$x = ...` (assign); range may declare two. */
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
}

export type Node =
  | { kind: 'text'; text: string }
  | { kind: 'action'; pipe: Pipeline }
  | { kind: 'if' | 'with' | 'range'; line: number; pipe: Pipeline; list: Node[]; elseList: Node[] | undefined }
  | { kind: 'template'; line: number; name: string; pipe: Pipeline | undefined };

/** A parsed template: its body and where it comes from (the file name, for errors). */
export interface Template {
  name: string;
  file: string;
  root: Node[];
}
